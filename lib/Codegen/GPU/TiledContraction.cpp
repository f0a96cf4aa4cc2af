//===- TiledContraction.cpp - contractions through shared memory ----------===//
//
// The contraction strategy of --ga-linalg-to-gpu-loops: a contraction
// `C(I, J) += A(I, K) * B(J, K)` (any payload, any operand layout, at most one
// batch dimension) whose reduction is long enough becomes one
// block-cooperative loop (`ga.cooperative`) over tiles of C: each block
// stages `tile x tile` blocks of A and B in block-scope buffers (shared
// memory after --ga-cooperative-loops-to-gpu) and every thread advances the
// running value of one element of C over them. Executed sequentially, each
// element is reduced over K in order, as by the linalg-to-loops lowering.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

namespace {
/// The roles of the loop dimensions of a contraction `C(I, J) += A(I, K) *
/// B(J, K)` (any payload; any operand layout; an optional batch dimension).
struct ContractionRoles {
  unsigned i, j, k;
  std::optional<unsigned> batch;
  OpOperand *a, *b; // the shaped inputs depending on (I, K) and (J, K)
};
} // namespace

static std::optional<ContractionRoles> matchContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      op.hasIndexSemantics())
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() || outMap.getNumResults() < 2)
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  ContractionRoles roles;
  roles.k = reductions.front();
  roles.j = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
  SmallVector<OpOperand *> shaped;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<ShapedType>(in->get().getType()))
      shaped.push_back(in);
  if (shaped.size() != 2)
    return std::nullopt;
  // A uses K and not J; B uses K and J.
  std::optional<unsigned> iDim;
  OpOperand *a = nullptr, *b = nullptr;
  for (OpOperand *in : shaped) {
    AffineMap m = op.getMatchingIndexingMap(in);
    if (!m.isProjectedPermutation() || !m.isFunctionOfDim(roles.k))
      return std::nullopt;
    if (m.isFunctionOfDim(roles.j)) {
      if (b)
        return std::nullopt;
      b = in;
    } else {
      if (a)
        return std::nullopt;
      a = in;
    }
  }
  if (!a || !b)
    return std::nullopt;
  // I: the parallel dimension of A that is not shared with B.
  AffineMap am = op.getMatchingIndexingMap(a),
            bm = op.getMatchingIndexingMap(b);
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (d == roles.k || d == roles.j || !am.isFunctionOfDim(d))
      continue;
    if (bm.isFunctionOfDim(d)) {
      if (roles.batch)
        return std::nullopt; // at most one batch dimension
      roles.batch = d;
    } else {
      if (iDim)
        return std::nullopt;
      iDim = d;
    }
  }
  if (!iDim)
    return std::nullopt;
  roles.i = *iDim;
  // Every loop dimension has a role, and the output has exactly the parallel
  // ones.
  unsigned known = 3 + (roles.batch ? 1 : 0);
  if (op.getNumLoops() != known ||
      outMap.getNumResults() != op.getNumParallelLoops())
    return std::nullopt;
  roles.a = a;
  roles.b = b;
  return roles;
}

/// A block-level parallel loop over `tile` x `tile` threads, mapped to
/// (thread_y, thread_x): scf.parallel (%ty, %tx) = (0, 0) to (tile, tile).
static void
buildThreadLoop(OpBuilder &b, Location loc, Value tile, Value zero, Value one,
                function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero}, ValueRange{tile, tile},
      ValueRange{one, one}, [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        body(nb, nloc, ivs[0], ivs[1]);
      });
  setProcessors(par, {gpu::Processor::ThreadY, gpu::Processor::ThreadX});
}

/// Runs `fn` under `if (cond)`.
static void buildIfThen(OpBuilder &b, Location loc, Value cond,
                        function_ref<void(OpBuilder &, Location)> fn) {
  scf::IfOp::create(b, loc, cond, [&](OpBuilder &tb, Location tl) {
    fn(tb, tl);
    scf::YieldOp::create(tb, tl);
  });
}

namespace {
/// Builds the body of one block of the tiled contraction: the block's tile
/// origin, its block-scope buffers and the three phases over them.
struct TiledContractionBuilder {
  TiledContractionBuilder(linalg::LinalgOp op, const ContractionRoles &roles,
                          linalg::LinalgOp fill, int64_t t, Value tile,
                          Value zero, Value one, ArrayRef<Value> sizes)
      : op(op), roles(roles), fill(fill), tile(tile), zero(zero), one(one),
        sizeI(sizes[roles.i]), sizeJ(sizes[roles.j]), sizeK(sizes[roles.k]),
        t(t), out(op.getDpsInitOperand(0)),
        outMap(op.getMatchingIndexingMap(out)) {}

  linalg::LinalgOp op;
  const ContractionRoles &roles;
  linalg::LinalgOp fill; // a fill folded into the accumulator, or null
  Value tile, zero, one, sizeI, sizeJ, sizeK;
  int64_t t;
  /// The accumulator (C) and its indexing map, which the running values
  /// start from and are written back to.
  OpOperand *out;
  AffineMap outMap;
  // Per block: its batch index, tile origin and buffers.
  Value bz, i0, j0, as, bs, acc;

  /// Loop indices of an element: (batch, i, j, k).
  SmallVector<Value> ivsFor(Value i, Value j, Value k) {
    SmallVector<Value> ivs(op.getNumLoops(), zero);
    ivs[roles.i] = i;
    ivs[roles.j] = j;
    ivs[roles.k] = k;
    if (roles.batch)
      ivs[*roles.batch] = bz;
    return ivs;
  }
  Value inBounds(OpBuilder &b, Location loc, Value i, Value j) {
    Value ci =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, sizeI);
    Value cj =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, sizeJ);
    return arith::AndIOp::create(b, loc, ci, cj);
  }
  /// A thread loop over the tile whose threads in bounds of C run `fn` with
  /// their (ty, tx) and element (i, j).
  void forEachElement(
      OpBuilder &b, Location loc,
      function_ref<void(OpBuilder &, Location, Value, Value, Value, Value)>
          fn) {
    buildThreadLoop(b, loc, tile, zero, one,
                    [&](OpBuilder &tb, Location tl, Value ty, Value tx) {
                      Value i = arith::AddIOp::create(tb, tl, i0, ty);
                      Value j = arith::AddIOp::create(tb, tl, j0, tx);
                      buildIfThen(tb, tl, inBounds(tb, tl, i, j),
                                  [&](OpBuilder &cb, Location cl) {
                                    fn(cb, cl, ty, tx, i, j);
                                  });
                    });
  }

  void buildBlock(OpBuilder &b, Location loc, ValueRange bids);
  void buildInit(OpBuilder &b, Location loc);
  void buildStage(OpBuilder &b, Location loc, Value k0);
  void buildAdvance(OpBuilder &b, Location loc, Value k0);
  void buildWriteBack(OpBuilder &b, Location loc);
};
} // namespace

void TiledContractionBuilder::buildBlock(OpBuilder &b, Location loc,
                                         ValueRange bids) {
  bz = bids[0];
  i0 = arith::MulIOp::create(b, loc, bids[1], tile);
  j0 = arith::MulIOp::create(b, loc, bids[2], tile);
  // Block-scope buffers: shared memory on the GPU. Heap buffers that the
  // deallocation pipeline frees at the end of the block's iteration when the
  // loops run on the CPU (stack buffers would grow the stack with every block
  // there).
  auto tileType = [&](Value v) {
    return MemRefType::get({t, t + 1}, getElementTypeOrSelf(v.getType()));
  };
  as = memref::AllocOp::create(b, loc, tileType(roles.a->get()));
  bs = memref::AllocOp::create(b, loc, tileType(roles.b->get()));
  acc = memref::AllocOp::create(b, loc, tileType(out->get()));
  buildInit(b, loc);
  // Over K by tiles: stage a tile of A (rows I) and of B (rows J), then every
  // thread advances its running value over the tile.
  scf::ForOp::create(b, loc, zero, sizeK, tile, ValueRange{},
                     [&](OpBuilder &fb, Location fl, Value k0, ValueRange) {
                       buildStage(fb, fl, k0);
                       buildAdvance(fb, fl, k0);
                       scf::YieldOp::create(fb, fl);
                     });
  buildWriteBack(b, loc);
}

/// 1. The running values: the accumulator's elements (or the value of a
///    folded fill).
void TiledContractionBuilder::buildInit(OpBuilder &b, Location loc) {
  forEachElement(
      b, loc,
      [&](OpBuilder &cb, Location cl, Value ty, Value tx, Value i, Value j) {
        Value v =
            fill ? fillValue(cb, fill, {})
                 : loadOperand(cb, cl, out->get(), outMap, ivsFor(i, j, zero));
        memref::StoreOp::create(cb, cl, v, acc, ValueRange{ty, tx});
      });
}

/// 2a. Stages the K tile at `k0` of A and B in block memory. For each
///     operand, the thread index that walks its contiguous dimension is tx
///     (coalesced loads).
void TiledContractionBuilder::buildStage(OpBuilder &b, Location loc, Value k0) {
  buildThreadLoop(
      b, loc, tile, zero, one,
      [&](OpBuilder &tb, Location tl, Value ty, Value tx) {
        auto stage = [&](OpOperand *in, Value rowBase, Value rowSize,
                         Value buffer, bool isA) {
          AffineMap m = op.getMatchingIndexingMap(in);
          bool kLast =
              cast<AffineDimExpr>(m.getResults().back()).getPosition() ==
              roles.k;
          Value p = kLast ? ty : tx, kk = kLast ? tx : ty;
          Value row = arith::AddIOp::create(tb, tl, rowBase, p);
          Value k = arith::AddIOp::create(tb, tl, k0, kk);
          Value c1 = arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::ult,
                                           row, rowSize);
          Value c2 = arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::ult, k,
                                           sizeK);
          Value ok = arith::AndIOp::create(tb, tl, c1, c2);
          buildIfThen(tb, tl, ok, [&](OpBuilder &cb, Location cl) {
            SmallVector<Value> ivs =
                isA ? ivsFor(row, zero, k) : ivsFor(zero, row, k);
            Value v = loadOperand(cb, cl, in->get(), m, ivs);
            memref::StoreOp::create(cb, cl, v, buffer, ValueRange{p, kk});
          });
        };
        stage(roles.a, i0, sizeI, as, /*isA=*/true);
        stage(roles.b, j0, sizeJ, bs, /*isA=*/false);
      });
}

/// 2b. Every thread advances its running value over the staged K tile, in
///     order, with the contraction's own payload.
void TiledContractionBuilder::buildAdvance(OpBuilder &b, Location loc,
                                           Value k0) {
  Block *payload = op.getBlock();
  forEachElement(
      b, loc,
      [&](OpBuilder &cb, Location cl, Value ty, Value tx, Value i, Value j) {
        Value left = arith::SubIOp::create(cb, cl, sizeK, k0);
        Value kmax = arith::MinUIOp::create(cb, cl, left, tile);
        Value s0 = memref::LoadOp::create(cb, cl, acc, ValueRange{ty, tx});
        auto loop = scf::ForOp::create(
            cb, cl, zero, kmax, one, ValueRange{s0},
            [&](OpBuilder &kb, Location kl, Value kk, ValueRange iter) {
              SmallVector<Value> args(payload->getNumArguments());
              for (OpOperand *in : op.getDpsInputOperands()) {
                unsigned n = in->getOperandNumber();
                if (in == roles.a)
                  args[n] =
                      memref::LoadOp::create(kb, kl, as, ValueRange{ty, kk});
                else if (in == roles.b)
                  args[n] =
                      memref::LoadOp::create(kb, kl, bs, ValueRange{tx, kk});
                else
                  args[n] = in->get();
              }
              args.back() = iter[0];
              Value k = arith::AddIOp::create(kb, kl, k0, kk);
              SmallVector<Value> r =
                  clonePayload(kb, op, args, ivsFor(i, j, k));
              scf::YieldOp::create(kb, kl, r);
            });
        memref::StoreOp::create(cb, cl, loop.getResult(0), acc,
                                ValueRange{ty, tx});
      });
}

/// 3. Write back: the accumulator once per element.
void TiledContractionBuilder::buildWriteBack(OpBuilder &b, Location loc) {
  forEachElement(
      b, loc,
      [&](OpBuilder &cb, Location cl, Value ty, Value tx, Value i, Value j) {
        Value v = memref::LoadOp::create(cb, cl, acc, ValueRange{ty, tx});
        memref::StoreOp::create(cb, cl, v, out->get(),
                                indicesFor(cb, cl, outMap, ivsFor(i, j, zero)));
      });
}

FailureOr<scf::ParallelOp>
FunctionLowering::lowerTiledContraction(linalg::LinalgOp op) {
  if (options.gemmTile == 0 || !op.hasPureBufferSemantics())
    return failure();
  std::optional<ContractionRoles> roles = matchContraction(op);
  if (!roles)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<Value> sizes;
  for (Range r : ranges)
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  std::optional<int64_t> staticK = getConstantIntValue(sizes[roles->k]);
  if (staticK && *staticK < static_cast<int64_t>(options.gemmMinReduction))
    return failure();

  SmallVector<linalg::LinalgOp> folded = getFoldedFills(op);
  int64_t t = options.gemmTile;
  Value tile = constIndex(b, loc, t), zero = constIndex(b, loc, 0),
        one = constIndex(b, loc, 1);
  TiledContractionBuilder builder(op, *roles, folded[0], t, tile, zero, one,
                                  sizes);
  Value gridI = arith::CeilDivUIOp::create(b, loc, builder.sizeI, tile);
  Value gridJ = arith::CeilDivUIOp::create(b, loc, builder.sizeJ, tile);
  Value gridB = roles->batch ? sizes[*roles->batch] : one;
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero}, ValueRange{gridB, gridI, gridJ},
      ValueRange{one, one, one},
      [&](OpBuilder &nb, Location nloc, ValueRange bids) {
        builder.buildBlock(nb, nloc, bids);
      });
  setProcessors(par, {gpu::Processor::BlockZ, gpu::Processor::BlockY,
                      gpu::Processor::BlockX});
  par->setAttr(GADialect::getCooperativeAttrName(), b.getUnitAttr());
  annotateKernel(par, op, "gemm");
  replaced(op, folded, /*kernels=*/1);
  ++counts.tiled;
  return par;
}
