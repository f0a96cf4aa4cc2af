//===- CooperativeRows.cpp - a warp or a block per row --------------------===//
//
// The kernel of a row group (RowFusion.cpp) whose rows are long: one thread
// per row would walk every row alone (a 50257-wide cross-entropy row is ~50 k
// dependent loads in one thread). Instead a row gets `lanes` threads, a warp
// (32) or a whole block, and the kernel is a block-cooperative loop
// (`ga.cooperative`, made a launch with shared memory and barriers by
// --ga-cooperative-loops-to-gpu):
//
//   scf.parallel (%blk) = (0) to (rows / rowsPerBlock) {   // block_x
//     %scratch = memref.alloc() : memref<threads x T>      // shared memory
//     // member 1, a reduction: lane l of row r from the neutral element
//     scf.parallel (%t) = (0) to (threads) {               // thread_x
//       acc = fold payload over k = l, l + lanes, ... ; scratch[t] = acc }
//     scf.parallel (%t) ... { if l < 16: scratch[t] = combine(scratch[t],
//                                                      scratch[t + 16]) }
//     ... (8, 4, 2, 1)
//     scf.parallel (%t) ... { if l == 0: out[r] = combine(out[r], scratch[t]) }
//     // member 2, element-wise over the row: lane l at l, l + lanes, ...
//     scf.parallel (%t) ... { out2[r, k] = payload(...) }
//   } {ga.cooperative}
//
// Consecutive lanes touch consecutive elements (the contiguous dimension is
// the fastest of the linearized row), so loads and stores are coalesced.
// Every thread-level loop ends in a barrier on the GPU; run sequentially (the
// CPU runs of ga-verify) it is plain loop semantics, and a member sees what
// the earlier members wrote for its row whichever lane wrote it.
//
// Numerics: the element-wise members compute the same operations per element
// as the one-thread-per-row kernel. A reduction is reassociated: lane partial
// sums from the neutral element, combined in a binary tree, then combined
// with the output's initial value. For a sum of n terms the error bound goes
// from (n - 1) u sum|x| (sequential) to about (n / lanes + log2 lanes) u
// sum|x|, no worse; max and min are exact either way. The CPU target never
// runs this code (it lowers linalg directly), so its exactness claims stand.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

int64_t gpu_loops::rowLength(const RowMember &m) {
  int64_t n = 1;
  linalg::LinalgOp op = m.op;
  for (auto [d, size] : llvm::enumerate(op.getStaticLoopRanges()))
    if (!llvm::is_contained(m.rowDims, d))
      n *= size;
  return n;
}

namespace {
/// The combining op of a reduction that lanes can split: one output, a
/// single binary combiner `out' = combine(out, value)` with a neutral
/// element.
struct Combiner {
  Operation *op;
  TypedAttr neutral;
};

/// The loop-invariant pieces of the kernel being built.
struct RowKernel {
  ArrayRef<int64_t> rowShape;
  int64_t rows, rowsPerBlock, lanes, threads;
  Value blockId;
};
} // namespace

static std::optional<Combiner> getCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1 || combiners.front()->getNumOperands() != 2)
    return std::nullopt;
  std::optional<TypedAttr> neutral =
      arith::getNeutralElement(combiners.front());
  if (!neutral)
    return std::nullopt;
  return Combiner{combiners.front(), *neutral};
}

/// `combine(acc, value)` with the combiner of `op`.
static Value combine(OpBuilder &b, linalg::LinalgOp op, Operation *combiner,
                     Value acc, Value value) {
  BlockArgument outArg = op.getRegionOutputArgs()[0];
  Value other = combiner->getOperand(0) == outArg ? combiner->getOperand(1)
                                                  : combiner->getOperand(0);
  IRMapping map;
  map.map(outArg, acc);
  map.map(other, value);
  return b.clone(*combiner, map)->getResult(0);
}

/// The loop indices of the linear index `lin` over `dims` (the last
/// fastest), written into `ivs`.
static void delinearize(OpBuilder &b, Location loc, Value lin,
                        ArrayRef<unsigned> dims, ArrayRef<int64_t> sizes,
                        SmallVectorImpl<Value> &ivs) {
  Value rest = lin;
  for (int64_t k = dims.size() - 1; k >= 0; --k) {
    if (k == 0) {
      ivs[dims[k]] = rest;
      break;
    }
    Value n = constIndex(b, loc, sizes[dims[k]]);
    ivs[dims[k]] = arith::RemUIOp::create(b, loc, rest, n);
    rest = arith::DivUIOp::create(b, loc, rest, n);
  }
}

/// One thread-level loop of the kernel: `body(row indices, lane, t)` for
/// every thread whose row exists and for which `laneFilter` (if any) holds.
static void buildThreadLoop(
    OpBuilder &b, Location loc, const RowKernel &k,
    function_ref<Value(OpBuilder &, Location, Value)> laneFilter,
    function_ref<void(OpBuilder &, Location, ValueRange, Value, Value)> body) {
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{constIndex(b, loc, k.threads)},
      ValueRange{one}, [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value t = ivs[0];
        Value lanesV = constIndex(nb, nloc, k.lanes);
        Value lane = arith::RemUIOp::create(nb, nloc, t, lanesV);
        Value row = arith::AddIOp::create(
            nb, nloc,
            arith::MulIOp::create(nb, nloc, k.blockId,
                                  constIndex(nb, nloc, k.rowsPerBlock)),
            arith::DivUIOp::create(nb, nloc, t, lanesV));
        Value ok;
        if (k.rows % k.rowsPerBlock != 0)
          ok = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult, row,
                                     constIndex(nb, nloc, k.rows));
        // A filter may let every lane through (a null condition).
        if (Value f = laneFilter ? laneFilter(nb, nloc, lane) : Value())
          ok = ok ? arith::AndIOp::create(nb, nloc, ok, f).getResult() : f;
        auto emit = [&](OpBuilder &eb, Location el) {
          SmallVector<Value> rowIvs(k.rowShape.size());
          SmallVector<unsigned> dims = llvm::to_vector(
              llvm::seq<unsigned>(0, static_cast<unsigned>(k.rowShape.size())));
          delinearize(eb, el, row, dims, k.rowShape, rowIvs);
          body(eb, el, rowIvs, lane, t);
        };
        if (!ok) {
          emit(nb, nloc);
        } else {
          scf::IfOp::create(nb, nloc, ok, [&](OpBuilder &tb, Location tl) {
            emit(tb, tl);
            scf::YieldOp::create(tb, tl);
          });
        }
      });
  setProcessors(par, {gpu::Processor::ThreadX});
}

/// Loop indices of member `m` at row `row`, zero elsewhere.
static SmallVector<Value> rowIvs(OpBuilder &b, Location loc, const RowMember &m,
                                 ValueRange row) {
  linalg::LinalgOp op = m.op;
  SmallVector<Value> ivs(op.getNumLoops(), constIndex(b, loc, 0));
  for (auto [k, d] : llvm::enumerate(m.rowDims))
    ivs[d] = row[k];
  return ivs;
}

/// A strided loop of lane `lane` over `n` elements: `body(k, iter)`.
static scf::ForOp buildLaneLoop(
    OpBuilder &b, Location loc, const RowKernel &k, Value lane, int64_t n,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body) {
  return scf::ForOp::create(
      b, loc, lane, constIndex(b, loc, n), constIndex(b, loc, k.lanes), inits,
      [&](OpBuilder &lb, Location ll, Value i, ValueRange iter) {
        scf::YieldOp::create(lb, ll, body(lb, ll, i, iter));
      });
}

/// A reduction member: lane partials, the tree, the combination with the
/// output.
static void buildReduction(OpBuilder &b, Location loc, const RowKernel &k,
                           const RowMember &m, const Combiner &c,
                           linalg::LinalgOp fill, Value scratch) {
  linalg::LinalgOp op = m.op;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> red;
  op.getReductionDims(red);
  int64_t length = rowLength(m);
  // 1. Lane partials from the neutral element, the row's last reduction
  //    dimension fastest (coalesced).
  buildThreadLoop(
      b, loc, k, nullptr,
      [&](OpBuilder &tb, Location tl, ValueRange row, Value lane, Value t) {
        SmallVector<Value> ivs = rowIvs(tb, tl, m, row);
        Value start = arith::ConstantOp::create(tb, tl, c.neutral);
        scf::ForOp loop = buildLaneLoop(
            tb, tl, k, lane, length, ValueRange{start},
            [&](OpBuilder &lb, Location ll, Value i, ValueRange iter) {
              SmallVector<Value> all(ivs);
              delinearize(lb, ll, i, red, sizes, all);
              SmallVector<Value> args(op.getBlock()->getNumArguments());
              for (OpOperand *in : op.getDpsInputOperands())
                args[in->getOperandNumber()] =
                    isa<MemRefType>(in->get().getType())
                        ? loadOperand(lb, ll, in->get(),
                                      op.getMatchingIndexingMap(in), all)
                        : in->get();
              args.back() = iter[0];
              return clonePayload(lb, op, args, all);
            });
        memref::StoreOp::create(tb, tl, loop.getResult(0), scratch,
                                ValueRange{t});
      });
  // 2. The tree: halves of the row's lanes fold in the other halves.
  for (int64_t s = k.lanes / 2; s >= 1; s /= 2)
    buildThreadLoop(
        b, loc, k,
        [&](OpBuilder &fb, Location fl, Value lane) -> Value {
          return arith::CmpIOp::create(fb, fl, arith::CmpIPredicate::ult, lane,
                                       constIndex(fb, fl, s));
        },
        [&](OpBuilder &tb, Location tl, ValueRange, Value, Value t) {
          Value other = arith::AddIOp::create(tb, tl, t, constIndex(tb, tl, s));
          Value x = memref::LoadOp::create(tb, tl, scratch, ValueRange{t});
          Value y = memref::LoadOp::create(tb, tl, scratch, ValueRange{other});
          memref::StoreOp::create(tb, tl, combine(tb, op, c.op, x, y), scratch,
                                  ValueRange{t});
        });
  // 3. Lane 0: the output (or a folded fill's value) combined with the row's
  //    total.
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  buildThreadLoop(
      b, loc, k,
      [&](OpBuilder &fb, Location fl, Value lane) -> Value {
        return arith::CmpIOp::create(fb, fl, arith::CmpIPredicate::eq, lane,
                                     constIndex(fb, fl, 0));
      },
      [&](OpBuilder &tb, Location tl, ValueRange row, Value, Value t) {
        SmallVector<Value> ivs = rowIvs(tb, tl, m, row);
        Value acc = fill ? fillValue(tb, fill, ivs)
                         : loadOperand(tb, tl, init->get(), outMap, ivs);
        Value total = memref::LoadOp::create(tb, tl, scratch, ValueRange{t});
        memref::StoreOp::create(tb, tl, combine(tb, op, c.op, acc, total),
                                init->get(), indicesFor(tb, tl, outMap, ivs));
      });
}

/// Any other member: lanes stride over its other parallel dimensions (the
/// contiguous dimension of its first output fastest), each element by the
/// one-thread-per-element code; with none, lane 0 computes the row's one
/// element (a reduction no lane split applies to).
static void buildPerElement(OpBuilder &b, Location loc, const RowKernel &k,
                            const RowMember &m,
                            ArrayRef<linalg::LinalgOp> folded) {
  linalg::LinalgOp op = m.op;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> rest;
  for (unsigned d : threadOrder(op))
    if (!llvm::is_contained(m.rowDims, d))
      rest.push_back(d);
  int64_t n = 1;
  for (unsigned d : rest)
    n *= sizes[d];
  buildThreadLoop(
      b, loc, k,
      [&](OpBuilder &fb, Location fl, Value lane) -> Value {
        if (!rest.empty())
          return Value();
        return arith::CmpIOp::create(fb, fl, arith::CmpIPredicate::eq, lane,
                                     constIndex(fb, fl, 0));
      },
      [&](OpBuilder &tb, Location tl, ValueRange row, Value lane, Value) {
        SmallVector<Value> ivs = rowIvs(tb, tl, m, row);
        SmallVector<Value> sizeValues;
        for (int64_t size : sizes)
          sizeValues.push_back(constIndex(tb, tl, size));
        if (rest.empty())
          return computeElement(tb, tl, op, ivs, sizeValues, folded);
        buildLaneLoop(tb, tl, k, lane, n, ValueRange{},
                      [&](OpBuilder &lb, Location ll, Value i, ValueRange) {
                        SmallVector<Value> all(ivs);
                        delinearize(lb, ll, i, rest, sizes, all);
                        computeElement(lb, ll, op, all, sizeValues, folded);
                        return SmallVector<Value>();
                      });
      });
}

scf::ParallelOp FunctionLowering::buildCooperativeRows(
    Operation *before, ArrayRef<RowMember> members, ArrayRef<int64_t> rowShape,
    unsigned lanes) {
  OpBuilder b(before);
  linalg::LinalgOp root = members.front().op;
  Location loc = root.getLoc();
  RowKernel k;
  k.rowShape = rowShape;
  k.rows = 1;
  for (int64_t s : rowShape)
    k.rows *= s;
  k.lanes = lanes;
  k.rowsPerBlock = std::max<int64_t>(
      1, std::min<int64_t>(options.blockSize / lanes, k.rows));
  k.threads = k.rowsPerBlock * k.lanes;
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value grid = constIndex(b, loc, llvm::divideCeil(k.rows, k.rowsPerBlock));
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{grid}, ValueRange{one},
      [&](OpBuilder &nb, Location nloc, ValueRange bids) {
        k.blockId = bids[0];
        // One block-scope scratch buffer per element type: the members run
        // one after the other, so they share it.
        llvm::MapVector<Type, Value> scratch;
        for (const RowMember &m : members) {
          linalg::LinalgOp op = m.op;
          std::optional<Combiner> c =
              op.getNumParallelLoops() == m.rowDims.size() ? getCombiner(op)
                                                           : std::nullopt;
          SmallVector<linalg::LinalgOp> folded = getFoldedFills(op);
          if (!c) {
            buildPerElement(nb, nloc, k, m, folded);
            continue;
          }
          Type elt = getElementTypeOrSelf(op.getDpsInits()[0].getType());
          Value &buf = scratch[elt];
          if (!buf) {
            OpBuilder::InsertionGuard guard(nb);
            nb.setInsertionPointToStart(nb.getInsertionBlock());
            buf = memref::AllocOp::create(nb, nloc,
                                          MemRefType::get({k.threads}, elt));
          }
          buildReduction(nb, nloc, k, m, *c, folded[0], buf);
        }
      });
  setProcessors(par, {gpu::Processor::BlockX});
  par->setAttr(GADialect::getCooperativeAttrName(), b.getUnitAttr());
  return par;
}
