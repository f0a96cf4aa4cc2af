//===- LinalgToGPULoops.cpp - linalg on buffers to mapped parallel loops --===//
//
// Lowers every linalg op (and memref.copy) on buffers to one `scf.parallel`
// over (blocks, threads) carrying a GPU mapping, so that
// `--convert-parallel-loops-to-gpu` turns each of them into one kernel:
//
// * the parallel dimensions of the op are linearized, the one that indexes
//   the innermost (contiguous) dimension of the first output fastest, so that
//   consecutive threads of a warp store to consecutive addresses;
// * each thread computes one output element; the reduction dimensions become
//   an `scf.for` nest inside the thread whose iter_args carry the running
//   value in registers: the output (for a gradient accumulator: the buffer
//   carried across micro-batches) is read once before the loop and written
//   once after it;
// * loads of device memory left on the host (a `tensor.extract` of a 0-d
//   result, say, feeding scalar math) are rematerialized inside the kernels
//   that use them, so that host code only computes sizes and launches.
//
// Executed sequentially (ga-lower-to-cpu), the output computes exactly what
// the linalg ops computed: every thread runs the same payload in the same
// reduction order as the linalg-to-loops lowering.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/Reductions.h"
#include "ga/Codegen/GPU/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::ga {
#define GEN_PASS_DEF_LINALGTOGPULOOPS
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// Name of the discardable attribute that says what a mapped loop computes
/// (the linalg op it came from); the GPU pipeline names kernels after it.
static constexpr StringLiteral kKernelAttr = "ga.kernel";

/// Marks a block-level mapped loop whose body the threads of a block run
/// together: block-scope buffers (workgroup memory), thread-level loops that
/// end in a barrier. --ga-cooperative-loops-to-gpu turns it into a launch.
static constexpr StringLiteral kCooperativeAttr = "ga.cooperative";

/// True if `op` is (inside) an `scf.parallel` mapped to the GPU.
static bool isInsideMappedLoop(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto par = dyn_cast<scf::ParallelOp>(p))
      if (par->hasAttr(gpu::getMappingAttrName()))
        return true;
  return false;
}

/// The outermost mapped `scf.parallel` around `op`, or null.
static scf::ParallelOp getOutermostMappedLoop(Operation *op) {
  scf::ParallelOp result;
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto par = dyn_cast<scf::ParallelOp>(p))
      if (par->hasAttr(gpu::getMappingAttrName()))
        result = par;
  return result;
}

/// The allocation (or block argument) a memref value is a view of.
static Value getRootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

static Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

namespace {

/// Builds one kernel-shaped loop over the iteration space `sizes` (row-major:
/// the last size varies fastest):
///
///   scf.parallel (%b, %t) = (0, 0) to (%grid, %block) step (1, 1) {
///     %lin = %b * %block + %t
///     scf.if %lin < %total {          // unless the sizes fill the grid
///       body(delinearize(%lin))
///     }
///   } {mapping = [block_x, thread_x]}
struct KernelLoopBuilder {
  unsigned maxBlockSize;

  scf::ParallelOp
  build(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
        function_ref<void(OpBuilder &, Location, ValueRange)> body) const {
    // Total number of threads that do work, statically if possible.
    std::optional<int64_t> staticTotal = 1;
    for (Value s : sizes) {
      std::optional<int64_t> c = getConstantIntValue(s);
      if (c && staticTotal)
        *staticTotal *= *c;
      else
        staticTotal.reset();
    }
    Value total;
    if (staticTotal) {
      total = constIndex(b, loc, *staticTotal);
    } else {
      total = sizes.front();
      for (Value s : sizes.drop_front())
        total = arith::MulIOp::create(b, loc, total, s);
    }
    int64_t blockSize = maxBlockSize;
    if (staticTotal)
      blockSize = std::min<int64_t>(
          maxBlockSize, std::max<int64_t>(32, llvm::alignTo(*staticTotal, 32)));
    Value block = constIndex(b, loc, blockSize);
    Value grid;
    bool guarded = true;
    if (staticTotal) {
      grid = constIndex(b, loc, llvm::divideCeil(*staticTotal, blockSize));
      guarded = *staticTotal % blockSize != 0;
    } else {
      grid = arith::CeilDivUIOp::create(b, loc, total, block);
    }
    Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
    auto par = scf::ParallelOp::create(
        b, loc, ValueRange{zero, zero}, ValueRange{grid, block},
        ValueRange{one, one},
        [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
          Value lin = arith::AddIOp::create(
              nb, nloc, arith::MulIOp::create(nb, nloc, ivs[0], block), ivs[1]);
          auto emitBody = [&](OpBuilder &bb, Location bl) {
            SmallVector<Value> idx(sizes.size());
            Value rest = lin;
            for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0;
                 --d) {
              if (d == 0) {
                idx[d] = rest;
                break;
              }
              idx[d] = arith::RemUIOp::create(bb, bl, rest, sizes[d]);
              rest = arith::DivUIOp::create(bb, bl, rest, sizes[d]);
            }
            body(bb, bl, idx);
          };
          if (guarded) {
            Value inBounds = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::ult, lin, total);
            scf::IfOp::create(nb, nloc, inBounds,
                              [&](OpBuilder &tb, Location tl) {
                                emitBody(tb, tl);
                                scf::YieldOp::create(tb, tl);
                              });
          } else {
            emitBody(nb, nloc);
          }
        });
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    (void)gpu::setMappingAttr(par, {gpu::ParallelLoopDimMappingAttr::get(
                                        ctx, gpu::Processor::BlockX, id, id),
                                    gpu::ParallelLoopDimMappingAttr::get(
                                        ctx, gpu::Processor::ThreadX, id, id)});
    return par;
  }
};

/// Loads `operand` at the indices its indexing map gives for `ivs` (one value
/// per loop dimension).
static Value loadOperand(OpBuilder &b, Location loc, Value memref,
                         AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<OpFoldResult> operands(ivs.begin(), ivs.end());
  SmallVector<Value> indices;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i) {
    OpFoldResult ofr = affine::makeComposedFoldedAffineApply(
        b, loc, map.getSubMap({i}), operands);
    indices.push_back(getValueOrCreateConstantIndexOp(b, loc, ofr));
  }
  return memref::LoadOp::create(b, loc, memref, indices);
}

static SmallVector<Value> indicesFor(OpBuilder &b, Location loc, AffineMap map,
                                     ArrayRef<Value> ivs) {
  SmallVector<OpFoldResult> operands(ivs.begin(), ivs.end());
  SmallVector<Value> indices;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
    indices.push_back(getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, map.getSubMap({i}),
                                              operands)));
  return indices;
}

/// Clones the payload of `op` with its block arguments bound to `args` and
/// `linalg.index` bound to `ivs`; returns the yielded values.
static SmallVector<Value> clonePayload(OpBuilder &b, linalg::LinalgOp op,
                                       ValueRange args, ArrayRef<Value> ivs) {
  Block *block = op.getBlock();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(block->getArguments(), args))
    if (v) // null for arguments the payload does not use
      map.map(arg, v);
  for (Operation &inner : block->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    Operation *clone = b.clone(inner, map);
    // linalg.index nested in regions of the payload (an scf.if, say).
    clone->walk([&](linalg::IndexOp nested) {
      nested.getResult().replaceAllUsesWith(ivs[nested.getDim()]);
      nested.erase();
    });
  }
  SmallVector<Value> results;
  for (Value v : block->getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(v));
  return results;
}

/// A zero (or null pointer-like) value of a scalar type, as the initial
/// value of an output the payload does not read.
static Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

/// True if `op` (or an op nested in it) may access a view of `root`, or has
/// effects we cannot see through.
static bool mayAccess(Operation *op, Value root) {
  WalkResult r = op->walk([&](Operation *nested) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!iface) {
      if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      return isMemoryEffectFree(nested) ? WalkResult::advance()
                                        : WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (auto &e : effects) {
      if (isa<MemoryEffects::Allocate>(e.getEffect()))
        continue;
      Value v = e.getValue();
      if (!v || getRootBuffer(v) == root)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// A fill (see isFillLike) of exactly the buffer `init` of `op` that nothing
/// reads
/// before `op` overwrites every element of it: `op` can start from the fill
/// value instead of reading it back (one kernel and one pass over the buffer
/// fewer). Null if there is none.
static linalg::LinalgOp findFoldableFill(linalg::LinalgOp op, OpOperand &init) {
  AffineMap map = op.getMatchingIndexingMap(&init);
  auto type = dyn_cast<MemRefType>(init.get().getType());
  if (!type || !map.isProjectedPermutation() ||
      map.getNumResults() != static_cast<unsigned>(type.getRank()))
    return {};
  Value root = getRootBuffer(init.get());
  // The op must not read the buffer through one of its inputs.
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType()) &&
        getRootBuffer(in->get()) == root)
      return {};
  // Reshapes (expand/collapse_shape) view the whole buffer: a fill of the
  // buffer is a fill of any reshape of it.
  auto stripReshapes = [](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
        break;
      v = def->getOperand(0);
    }
    return v;
  };
  Value target = stripReshapes(init.get());
  for (Operation *it = op->getPrevNode(); it; it = it->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::LinalgOp>(it))
      if (fill.hasPureBufferSemantics() && isFillLike(fill) &&
          stripReshapes(fill.getDpsInits()[0]) == target)
        return fill;
    if (mayAccess(it, root))
      return {};
  }
  return {};
}

/// Erases the index arithmetic and constants that the lowering created but
/// did not use (no canonicalization may run on mapped loops: it would fold
/// single-block loops and drop their mapping).
static void eraseDeadOps(Region &region) {
  for (Block &block : region)
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      if (isOpTriviallyDead(&op)) {
        op.erase();
        continue;
      }
      for (Region &nested : op.getRegions())
        eraseDeadOps(nested);
    }
}

struct LinalgToGPULoopsPass
    : public ga::impl::LinalgToGPULoopsBase<LinalgToGPULoopsPass> {
  using Base::Base;

  void runOnOperation() override;

  LogicalResult lowerLinalgOp(linalg::LinalgOp op);
  /// Lowers a contraction to a block-cooperative loop nest with tiles of its
  /// operands in block-scope buffers (shared memory on the GPU); failure if
  /// `op` does not have the shape it handles (then lowerLinalgOp does).
  FailureOr<scf::ParallelOp> lowerTiledContraction(linalg::LinalgOp op);
  /// Lowers a long reduction into few outputs as two kernels: partial
  /// results of chunks of the reduction, then their combination into the
  /// output (the accumulation stays in that second kernel); failure if `op`
  /// is not such a reduction.
  LogicalResult lowerSplitReduction(linalg::LinalgOp op);
  LogicalResult lowerCopy(memref::CopyOp op);
  void wrapHostStores(func::FuncOp func);
  Value snapshotHostLoad(memref::LoadOp load);
  LogicalResult sinkHostLoads(func::FuncOp func);

  /// Per linalg op, per output: the fill it absorbs (or null).
  DenseMap<Operation *, SmallVector<linalg::LinalgOp>> foldedFills;

  KernelLoopBuilder kernelBuilder() const {
    return KernelLoopBuilder{static_cast<unsigned>(blockSize)};
  }
};

} // namespace

/// Copies the `ga.*` attributes of `from` onto the mapped loop and names it.
static void annotateKernel(scf::ParallelOp par, Operation *from,
                           StringRef kind) {
  par->setAttr(kKernelAttr, StringAttr::get(par.getContext(), kind));
  for (NamedAttribute attr : from->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("ga.") &&
        attr.getName() != kKernelAttr)
      par->setAttr(attr.getName(), attr.getValue());
}

/// What a linalg op computes, for kernel names: the named op, or for a
/// `linalg.generic` its shape (`fill`, `matmul` for contractions, `reduce`,
/// `elementwise`).
static std::string describeKernel(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op))
    return op->getName().stripDialect().str();
  bool hasTensorInput =
      llvm::any_of(op.getDpsInputOperands(), [](OpOperand *in) {
        return isa<ShapedType>(in->get().getType());
      });
  if (!hasTensorInput)
    return "fill";
  if (op.getNumReductionLoops() == 0)
    return "elementwise";
  if (linalg::isaContractionOpInterface(op))
    return "matmul";
  return "reduce";
}

LogicalResult LinalgToGPULoopsPass::lowerLinalgOp(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return op->emitOpError()
           << "expected buffer semantics (run one-shot-bufferize before "
              "ga-linalg-to-gpu-loops)";
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<Value> loopSizes;
  for (Range r : ranges) {
    // createLoopRanges gives offset 0 and stride 1 for every dimension.
    loopSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  }
  SmallVector<unsigned> parallelDims, reductionDims;
  for (auto [d, it] : llvm::enumerate(iterators))
    (it == utils::IteratorType::parallel ? parallelDims : reductionDims)
        .push_back(d);

  // The parallel dimension that indexes the contiguous dimension of the first
  // output becomes the fastest one: consecutive threads, consecutive stores.
  std::optional<unsigned> fastest;
  if (op.getNumDpsInits() > 0) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (outMap.getNumResults() > 0)
      if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
        if (llvm::is_contained(parallelDims, dim.getPosition()))
          fastest = dim.getPosition();
  }
  SmallVector<unsigned> order;
  for (unsigned d : parallelDims)
    if (!fastest || d != *fastest)
      order.push_back(d);
  if (fastest)
    order.push_back(*fastest);
  SmallVector<Value> orderedSizes;
  for (unsigned d : order)
    orderedSizes.push_back(loopSizes[d]);

  // Fills of an output that the op overwrites: start from the fill value.
  SmallVector<linalg::LinalgOp> folded = foldedFills.lookup(op);
  folded.resize(op.getNumDpsInits());

  unsigned numLoops = op.getNumLoops();
  Block *payload = op.getBlock();
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  auto par = kernelBuilder().build(
      b, loc, orderedSizes, [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(numLoops, zero);
        for (auto [k, d] : llvm::enumerate(order))
          ivs[d] = pivs[k];

        // Inputs that only depend on parallel dimensions are loaded once,
        // outside the reduction loop.
        SmallVector<Value> args(payload->getNumArguments());
        SmallVector<OpOperand *> deferred;
        for (OpOperand *in : op.getDpsInputOperands()) {
          unsigned argNo = in->getOperandNumber();
          if (!isa<MemRefType>(in->get().getType())) {
            args[argNo] = in->get();
            continue;
          }
          if (!op.payloadUsesValueFromOperand(in))
            continue;
          AffineMap map = op.getMatchingIndexingMap(in);
          bool usesReduction = llvm::any_of(reductionDims, [&](unsigned d) {
            return map.isFunctionOfDim(d);
          });
          if (usesReduction)
            deferred.push_back(in);
          else
            args[argNo] = loadOperand(nb, nloc, in->get(), map, ivs);
        }
        // Outputs: the current value (read once), carried in registers.
        SmallVector<Value> outInit;
        for (OpOperand &out : op.getDpsInitsMutable()) {
          Type elt = getElementTypeOrSelf(out.get().getType());
          linalg::LinalgOp fill = folded[outInit.size()];
          if (fill && op.payloadUsesValueFromOperand(&out)) {
            // The fill's payload with its scalar inputs: the fill value.
            SmallVector<Value> fillArgs;
            for (OpOperand *in : fill.getDpsInputOperands())
              fillArgs.push_back(in->get());
            fillArgs.push_back(Value());
            outInit.push_back(clonePayload(nb, fill, fillArgs, ivs)[0]);
          } else if (op.payloadUsesValueFromOperand(&out)) {
            outInit.push_back(loadOperand(
                nb, nloc, out.get(), op.getMatchingIndexingMap(&out), ivs));
          } else {
            // Not read by the payload: any value (an iter_arg needs one).
            outInit.push_back(reductionDims.empty() ? Value()
                                                    : zeroOf(nb, nloc, elt));
          }
        }
        unsigned numInputs = op.getNumDpsInputs();
        auto computeAt = [&](OpBuilder &ib, Location il, ArrayRef<Value> allIvs,
                             ValueRange current) -> SmallVector<Value> {
          SmallVector<Value> bound(args);
          for (OpOperand *in : deferred)
            bound[in->getOperandNumber()] = loadOperand(
                ib, il, in->get(), op.getMatchingIndexingMap(in), allIvs);
          for (auto [k, v] : llvm::enumerate(current))
            bound[numInputs + k] = v;
          return clonePayload(ib, op, bound, allIvs);
        };

        SmallVector<Value> results;
        if (reductionDims.empty()) {
          results = computeAt(nb, nloc, ivs, outInit);
        } else {
          SmallVector<Value> lbs(reductionDims.size(), zero), ubs,
              steps(reductionDims.size(), one);
          for (unsigned d : reductionDims)
            ubs.push_back(loopSizes[d]);
          scf::LoopNest nest = scf::buildLoopNest(
              nb, nloc, lbs, ubs, steps, outInit,
              [&](OpBuilder &ib, Location il, ValueRange rivs,
                  ValueRange iter) -> scf::ValueVector {
                SmallVector<Value> allIvs(ivs);
                for (auto [k, d] : llvm::enumerate(reductionDims))
                  allIvs[d] = rivs[k];
                SmallVector<Value> r = computeAt(ib, il, allIvs, iter);
                return scf::ValueVector(r.begin(), r.end());
              });
          results.assign(nest.results.begin(), nest.results.end());
        }
        for (auto [out, v] : llvm::zip(op.getDpsInitsMutable(), results)) {
          SmallVector<Value> idx =
              indicesFor(nb, nloc, op.getMatchingIndexingMap(&out), ivs);
          memref::StoreOp::create(nb, nloc, v, out.get(), idx);
        }
      });
  annotateKernel(par, op, describeKernel(op));
  op->erase();
  for (linalg::LinalgOp fill : folded)
    if (fill) {
      fill->erase();
      ++numFoldedFills;
    }
  ++numKernels;
  return success();
}

//===----------------------------------------------------------------------===//
// Tiled contractions
//===----------------------------------------------------------------------===//

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
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  (void)gpu::setMappingAttr(par, {gpu::ParallelLoopDimMappingAttr::get(
                                      ctx, gpu::Processor::ThreadY, id, id),
                                  gpu::ParallelLoopDimMappingAttr::get(
                                      ctx, gpu::Processor::ThreadX, id, id)});
}

FailureOr<scf::ParallelOp>
LinalgToGPULoopsPass::lowerTiledContraction(linalg::LinalgOp op) {
  if (gemmTile == 0 || !op.hasPureBufferSemantics())
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
  if (staticK && *staticK < static_cast<int64_t>(gemmMinReduction))
    return failure();

  int64_t t = gemmTile;
  Value tile = constIndex(b, loc, t), zero = constIndex(b, loc, 0),
        one = constIndex(b, loc, 1);
  Value sizeI = sizes[roles->i], sizeJ = sizes[roles->j],
        sizeK = sizes[roles->k];
  Value gridI = arith::CeilDivUIOp::create(b, loc, sizeI, tile);
  Value gridJ = arith::CeilDivUIOp::create(b, loc, sizeJ, tile);
  Value gridB = roles->batch ? sizes[*roles->batch] : one;

  SmallVector<linalg::LinalgOp> folded = foldedFills.lookup(op);
  folded.resize(1);
  linalg::LinalgOp fill = folded[0];
  OpOperand *init = op.getDpsInitOperand(0);
  Value out = init->get();
  AffineMap outMap = op.getMatchingIndexingMap(init);
  Block *payload = op.getBlock();
  unsigned numLoops = op.getNumLoops();

  auto tileType = [&](Value v) {
    return MemRefType::get({t, t + 1}, getElementTypeOrSelf(v.getType()));
  };

  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero}, ValueRange{gridB, gridI, gridJ},
      ValueRange{one, one, one},
      [&](OpBuilder &nb, Location nloc, ValueRange bids) {
        Value bz = bids[0], bi = bids[1], bj = bids[2];
        Value i0 = arith::MulIOp::create(nb, nloc, bi, tile);
        Value j0 = arith::MulIOp::create(nb, nloc, bj, tile);
        // Block-scope buffers: shared memory on the GPU. Heap buffers that
        // the deallocation pipeline frees at the end of the block's
        // iteration when the loops run on the CPU (stack buffers would grow
        // the stack with every block there).
        OpBuilder &sb = nb;
        Value as = memref::AllocOp::create(sb, nloc, tileType(roles->a->get()));
        Value bs = memref::AllocOp::create(sb, nloc, tileType(roles->b->get()));
        Value acc = memref::AllocOp::create(sb, nloc, tileType(out));

        // Loop indices of an element: (batch, i, j, k).
        auto ivsFor = [&](Value i, Value j, Value k) {
          SmallVector<Value> ivs(numLoops, zero);
          ivs[roles->i] = i;
          ivs[roles->j] = j;
          ivs[roles->k] = k;
          if (roles->batch)
            ivs[*roles->batch] = bz;
          return ivs;
        };
        auto inBounds = [&](OpBuilder &ib, Location il, Value i, Value j) {
          Value ci = arith::CmpIOp::create(ib, il, arith::CmpIPredicate::ult, i,
                                           sizeI);
          Value cj = arith::CmpIOp::create(ib, il, arith::CmpIPredicate::ult, j,
                                           sizeJ);
          return arith::AndIOp::create(ib, il, ci, cj);
        };
        auto ifThen = [&](OpBuilder &ib, Location il, Value cond,
                          function_ref<void(OpBuilder &, Location)> fn) {
          scf::IfOp::create(ib, il, cond, [&](OpBuilder &tb, Location tl) {
            fn(tb, tl);
            scf::YieldOp::create(tb, tl);
          });
        };

        // 1. The running values: the accumulator's elements (or the value of
        //    a folded fill).
        buildThreadLoop(
            sb, nloc, tile, zero, one,
            [&](OpBuilder &tb, Location tl, Value ty, Value tx) {
              Value i = arith::AddIOp::create(tb, tl, i0, ty);
              Value j = arith::AddIOp::create(tb, tl, j0, tx);
              ifThen(
                  tb, tl, inBounds(tb, tl, i, j),
                  [&](OpBuilder &cb, Location cl) {
                    Value v;
                    if (fill) {
                      SmallVector<Value> args;
                      for (OpOperand *in : fill.getDpsInputOperands())
                        args.push_back(in->get());
                      args.push_back(Value());
                      v = clonePayload(cb, fill, args, {})[0];
                    } else {
                      v = loadOperand(cb, cl, out, outMap, ivsFor(i, j, zero));
                    }
                    memref::StoreOp::create(cb, cl, v, acc, ValueRange{ty, tx});
                  });
            });

        // 2. Over K by tiles: stage a tile of A (rows I) and of B (rows J),
        //    then every thread advances its running value over the tile.
        scf::ForOp::create(
            sb, nloc, zero, sizeK, tile, ValueRange{},
            [&](OpBuilder &fb, Location fl, Value k0, ValueRange) {
              buildThreadLoop(
                  fb, fl, tile, zero, one,
                  [&](OpBuilder &tb, Location tl, Value ty, Value tx) {
                    // For each operand, the thread index that walks its
                    // contiguous dimension is tx (coalesced loads).
                    auto stage = [&](OpOperand *in, Value rowBase,
                                     Value rowSize, Value buffer, bool isA) {
                      AffineMap m = op.getMatchingIndexingMap(in);
                      bool kLast = cast<AffineDimExpr>(m.getResults().back())
                                       .getPosition() == roles->k;
                      Value p = kLast ? ty : tx, kk = kLast ? tx : ty;
                      Value row = arith::AddIOp::create(tb, tl, rowBase, p);
                      Value k = arith::AddIOp::create(tb, tl, k0, kk);
                      Value c1 = arith::CmpIOp::create(
                          tb, tl, arith::CmpIPredicate::ult, row, rowSize);
                      Value c2 = arith::CmpIOp::create(
                          tb, tl, arith::CmpIPredicate::ult, k, sizeK);
                      Value ok = arith::AndIOp::create(tb, tl, c1, c2);
                      ifThen(tb, tl, ok, [&](OpBuilder &cb, Location cl) {
                        SmallVector<Value> ivs =
                            isA ? ivsFor(row, zero, k) : ivsFor(zero, row, k);
                        Value v = loadOperand(cb, cl, in->get(), m, ivs);
                        memref::StoreOp::create(cb, cl, v, buffer,
                                                ValueRange{p, kk});
                      });
                    };
                    stage(roles->a, i0, sizeI, as, /*isA=*/true);
                    stage(roles->b, j0, sizeJ, bs, /*isA=*/false);
                  });
              buildThreadLoop(
                  fb, fl, tile, zero, one,
                  [&](OpBuilder &tb, Location tl, Value ty, Value tx) {
                    Value i = arith::AddIOp::create(tb, tl, i0, ty);
                    Value j = arith::AddIOp::create(tb, tl, j0, tx);
                    ifThen(
                        tb, tl, inBounds(tb, tl, i, j),
                        [&](OpBuilder &cb, Location cl) {
                          Value left = arith::SubIOp::create(cb, cl, sizeK, k0);
                          Value kmax =
                              arith::MinUIOp::create(cb, cl, left, tile);
                          Value s0 = memref::LoadOp::create(cb, cl, acc,
                                                            ValueRange{ty, tx});
                          auto loop = scf::ForOp::create(
                              cb, cl, zero, kmax, one, ValueRange{s0},
                              [&](OpBuilder &kb, Location kl, Value kk,
                                  ValueRange iter) {
                                SmallVector<Value> args(
                                    payload->getNumArguments());
                                for (OpOperand *in : op.getDpsInputOperands()) {
                                  unsigned n = in->getOperandNumber();
                                  if (in == roles->a)
                                    args[n] = memref::LoadOp::create(
                                        kb, kl, as, ValueRange{ty, kk});
                                  else if (in == roles->b)
                                    args[n] = memref::LoadOp::create(
                                        kb, kl, bs, ValueRange{tx, kk});
                                  else
                                    args[n] = in->get();
                                }
                                args.back() = iter[0];
                                Value k = arith::AddIOp::create(kb, kl, k0, kk);
                                SmallVector<Value> r =
                                    clonePayload(kb, op, args, ivsFor(i, j, k));
                                scf::YieldOp::create(kb, kl, r);
                              });
                          memref::StoreOp::create(cb, cl, loop.getResult(0),
                                                  acc, ValueRange{ty, tx});
                        });
                  });
              scf::YieldOp::create(fb, fl);
            });

        // 3. Write back: the accumulator once per element.
        buildThreadLoop(
            sb, nloc, tile, zero, one,
            [&](OpBuilder &tb, Location tl, Value ty, Value tx) {
              Value i = arith::AddIOp::create(tb, tl, i0, ty);
              Value j = arith::AddIOp::create(tb, tl, j0, tx);
              ifThen(tb, tl, inBounds(tb, tl, i, j),
                     [&](OpBuilder &cb, Location cl) {
                       Value v = memref::LoadOp::create(cb, cl, acc,
                                                        ValueRange{ty, tx});
                       memref::StoreOp::create(
                           cb, cl, v, out,
                           indicesFor(cb, cl, outMap, ivsFor(i, j, zero)));
                     });
            });
      });
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  (void)gpu::setMappingAttr(par, {gpu::ParallelLoopDimMappingAttr::get(
                                      ctx, gpu::Processor::BlockZ, id, id),
                                  gpu::ParallelLoopDimMappingAttr::get(
                                      ctx, gpu::Processor::BlockY, id, id),
                                  gpu::ParallelLoopDimMappingAttr::get(
                                      ctx, gpu::Processor::BlockX, id, id)});
  par->setAttr(kCooperativeAttr, UnitAttr::get(ctx));
  annotateKernel(par, op, "gemm");
  op->erase();
  if (fill) {
    fill->erase();
    ++numFoldedFills;
  }
  ++numKernels;
  ++numTiled;
  return par;
}

//===----------------------------------------------------------------------===//
// Split reductions
//===----------------------------------------------------------------------===//

LogicalResult LinalgToGPULoopsPass::lowerSplitReduction(linalg::LinalgOp op) {
  if (splitReductionMin == 0 || !op.hasPureBufferSemantics() ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op.hasIndexSemantics())
    return failure();
  // The combiner: out' = combine(out, value).
  Block *payload = op.getBlock();
  SmallVector<Operation *> combiners;
  BlockArgument outArg = op.getRegionOutputArgs()[0];
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral || combiner->getNumOperands() != 2)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<int64_t> sizes;
  for (Range r : ranges) {
    std::optional<int64_t> c = getConstantIntValue(r.size);
    if (!c)
      return failure(); // static sizes only
    sizes.push_back(*c);
  }
  SmallVector<unsigned> parallelDims, reductionDims;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? parallelDims : reductionDims)
        .push_back(d);
  int64_t outputs = 1, length = 1;
  for (unsigned d : parallelDims)
    outputs *= sizes[d];
  for (unsigned d : reductionDims)
    length *= sizes[d];
  // Enough threads already, or too short to be worth a second kernel.
  const int64_t targetThreads = 16384;
  if (length < static_cast<int64_t>(splitReductionMin) ||
      outputs * 2 > targetThreads)
    return failure();
  // At least 32 elements per chunk, at least two chunks.
  int64_t splits = std::max<int64_t>(
      2, std::min<int64_t>(llvm::divideCeil(targetThreads, outputs),
                           llvm::divideCeil(length, 32)));
  int64_t chunk = llvm::divideCeil(length, splits);
  splits = llvm::divideCeil(length, chunk);

  // The output's contiguous dimension fastest, as for other kernels.
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  SmallVector<unsigned> order;
  std::optional<unsigned> fastest;
  if (outMap.getNumResults() > 0)
    if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
      fastest = dim.getPosition();
  for (unsigned d : parallelDims)
    if (!fastest || d != *fastest)
      order.push_back(d);
  if (fastest)
    order.push_back(*fastest);

  Type elt = getElementTypeOrSelf(init->get().getType());
  auto partialType = MemRefType::get({splits, outputs}, elt);
  Value partial = memref::AllocOp::create(b, loc, partialType);
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value chunkV = constIndex(b, loc, chunk),
        lengthV = constIndex(b, loc, length);
  unsigned numLoops = op.getNumLoops();
  auto linearOutput = [&](OpBuilder &nb, Location nloc, ArrayRef<Value> ivs) {
    Value lin = zero;
    for (unsigned d : order)
      lin = arith::AddIOp::create(
          nb, nloc,
          arith::MulIOp::create(nb, nloc, lin, constIndex(nb, nloc, sizes[d])),
          ivs[d]);
    return lin;
  };

  // Kernel 1: partial[s][p] = the reduction over chunk s, from the neutral
  // element.
  SmallVector<Value> sizes1 = {constIndex(b, loc, splits)};
  for (unsigned d : order)
    sizes1.push_back(constIndex(b, loc, sizes[d]));
  auto part = kernelBuilder().build(
      b, loc, sizes1, [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(numLoops, zero);
        for (auto [k, d] : llvm::enumerate(order))
          ivs[d] = pivs[k + 1];
        Value lo = arith::MulIOp::create(nb, nloc, pivs[0], chunkV);
        Value hi = arith::MinUIOp::create(
            nb, nloc, arith::AddIOp::create(nb, nloc, lo, chunkV), lengthV);
        Value start = arith::ConstantOp::create(nb, nloc, *neutral);
        auto loop = scf::ForOp::create(
            nb, nloc, lo, hi, one, ValueRange{start},
            [&](OpBuilder &lb, Location ll, Value r, ValueRange iter) {
              SmallVector<Value> all(ivs);
              Value rest = r;
              for (int64_t k = reductionDims.size() - 1; k >= 0; --k) {
                unsigned d = reductionDims[k];
                if (k == 0) {
                  all[d] = rest;
                  break;
                }
                Value n = constIndex(lb, ll, sizes[d]);
                all[d] = arith::RemUIOp::create(lb, ll, rest, n);
                rest = arith::DivUIOp::create(lb, ll, rest, n);
              }
              SmallVector<Value> args(payload->getNumArguments());
              for (OpOperand *in : op.getDpsInputOperands()) {
                unsigned n = in->getOperandNumber();
                args[n] = isa<MemRefType>(in->get().getType())
                              ? loadOperand(lb, ll, in->get(),
                                            op.getMatchingIndexingMap(in), all)
                              : in->get();
              }
              args.back() = iter[0];
              SmallVector<Value> res = clonePayload(lb, op, args, all);
              scf::YieldOp::create(lb, ll, res);
            });
        memref::StoreOp::create(
            nb, nloc, loop.getResult(0), partial,
            ValueRange{pivs[0], linearOutput(nb, nloc, ivs)});
      });
  annotateKernel(part, op, "reduce_part");
  part->removeAttr("ga.accumulates"); // the second kernel accumulates

  // Kernel 2: out = combine(out, partial[0][p], ..., partial[S-1][p]).
  SmallVector<linalg::LinalgOp> folded = foldedFills.lookup(op);
  folded.resize(1);
  linalg::LinalgOp fill = folded[0];
  SmallVector<Value> sizes2(sizes1.begin() + 1, sizes1.end());
  auto combine = kernelBuilder().build(
      b, loc, sizes2, [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(numLoops, zero);
        for (auto [k, d] : llvm::enumerate(order))
          ivs[d] = pivs[k];
        Value acc;
        if (fill) {
          SmallVector<Value> args;
          for (OpOperand *in : fill.getDpsInputOperands())
            args.push_back(in->get());
          args.push_back(Value());
          acc = clonePayload(nb, fill, args, {})[0];
        } else {
          acc = loadOperand(nb, nloc, init->get(), outMap, ivs);
        }
        Value p = linearOutput(nb, nloc, ivs);
        auto loop = scf::ForOp::create(
            nb, nloc, zero, constIndex(nb, nloc, splits), one, ValueRange{acc},
            [&](OpBuilder &lb, Location ll, Value sIdx, ValueRange iter) {
              Value v =
                  memref::LoadOp::create(lb, ll, partial, ValueRange{sIdx, p});
              IRMapping map;
              Value other = combiner->getOperand(0) == outArg
                                ? combiner->getOperand(1)
                                : combiner->getOperand(0);
              map.map(outArg, iter[0]);
              map.map(other, v);
              Operation *c = lb.clone(*combiner, map);
              scf::YieldOp::create(lb, ll, c->getResults());
            });
        memref::StoreOp::create(nb, nloc, loop.getResult(0), init->get(),
                                indicesFor(nb, nloc, outMap, ivs));
      });
  annotateKernel(combine, op, "reduce");
  op->erase();
  if (fill) {
    fill->erase();
    ++numFoldedFills;
  }
  numKernels += 2;
  ++numSplit;
  return success();
}

LogicalResult LinalgToGPULoopsPass::lowerCopy(memref::CopyOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<MemRefType>(op.getSource().getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d)
    sizes.push_back(getValueOrCreateConstantIndexOp(
        b, loc, memref::getMixedSize(b, loc, op.getSource(), d)));
  Value src = op.getSource(), dst = op.getTarget();
  auto par = kernelBuilder().build(
      b, loc, sizes, [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value v = memref::LoadOp::create(nb, nloc, src, ivs);
        memref::StoreOp::create(nb, nloc, v, dst, ivs);
      });
  annotateKernel(par, op, "copy");
  op->erase();
  ++numKernels;
  return success();
}

/// Returns true if `op` (or an op nested in it) may write to a view of
/// `root`, or has effects we cannot see through.
static bool mayWriteTo(Operation *op, Value root) {
  WalkResult r = op->walk([&](Operation *nested) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!iface) {
      if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      return isa<func::CallOp>(nested) ? WalkResult::interrupt()
                                       : WalkResult::advance();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (auto &e : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      Value v = e.getValue();
      if (!v || getRootBuffer(v) == root)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// `memref.get_global` used by kernels is cloned into them: a global is
/// copied into the GPU module with the kernel, a host address is not.
static void sinkGlobals(func::FuncOp func) {
  SmallVector<memref::GetGlobalOp> globals;
  func.walk([&](memref::GetGlobalOp op) {
    if (!isInsideMappedLoop(op))
      globals.push_back(op);
  });
  for (memref::GetGlobalOp op : globals) {
    for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
      scf::ParallelOp k = getOutermostMappedLoop(use.getOwner());
      if (!k)
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(k.getBody());
      use.set(b.clone(*op)->getResult(0));
    }
    if (op->use_empty())
      op->erase();
  }
}

/// True if `memref` is a view of host memory (a stack buffer or a global).
static bool isHostBuffer(Value memref) {
  if (Operation *def = getRootBuffer(memref).getDefiningOp())
    return isa<memref::AllocaOp, memref::GetGlobalOp>(def);
  return false;
}

/// Kernel kinds that run one thread (wrapHostStores, snapshotHostLoad).
static constexpr StringLiteral kStoreKernel = "store";
static constexpr StringLiteral kSnapshotKernel = "snapshot";

static bool isSingleThreadKernel(scf::ParallelOp k) {
  auto kind = k->getAttrOfType<StringAttr>(kKernelAttr);
  return kind && (kind == kStoreKernel || kind == kSnapshotKernel);
}

/// Host stores into device buffers (what bufferization makes of
/// `tensor.from_elements` and `tensor.insert` of host scalars: a loss or a
/// step counter put into a 0-d tensor) become a kernel of one thread; a run of
/// adjacent stores is one kernel. The stored values and indices are host
/// values and become kernel arguments; device loads among them are sunk into
/// the kernel by sinkHostLoads.
void LinalgToGPULoopsPass::wrapHostStores(func::FuncOp func) {
  SmallVector<SmallVector<memref::StoreOp>> runs;
  func.walk([&](memref::StoreOp store) {
    if (isInsideMappedLoop(store) || isHostBuffer(store.getMemref()))
      return;
    if (!runs.empty() && runs.back().back()->getNextNode() == store)
      runs.back().push_back(store);
    else
      runs.push_back({store});
  });
  for (SmallVector<memref::StoreOp> &run : runs) {
    OpBuilder b(run.front());
    Location loc = run.front().getLoc();
    Value one = constIndex(b, loc, 1);
    auto par = kernelBuilder().build(b, loc, {one},
                                     [&](OpBuilder &nb, Location, ValueRange) {
                                       for (memref::StoreOp store : run)
                                         nb.clone(*store);
                                     });
    annotateKernel(par, run.front(), kStoreKernel);
    for (memref::StoreOp store : run)
      store->erase();
    ++numKernels;
  }
}

/// Copies the element that `load` reads into a fresh 0-d device buffer, in a
/// kernel of one thread at the place of the load, and returns a load of that
/// copy: kernels that use the value read the copy, which nothing overwrites
/// (the original buffer may be written between the load and a kernel that
/// uses the value, e.g. an accumulator by the next loop over micro-batches).
Value LinalgToGPULoopsPass::snapshotHostLoad(memref::LoadOp load) {
  OpBuilder b(load);
  Location loc = load.getLoc();
  auto type = MemRefType::get({}, load.getType());
  Value snapshot = memref::AllocOp::create(b, loc, type);
  Value one = constIndex(b, loc, 1);
  auto par = kernelBuilder().build(
      b, loc, {one}, [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value v = memref::LoadOp::create(nb, nloc, load.getMemref(),
                                         load.getIndices());
        memref::StoreOp::create(nb, nloc, v, snapshot, ValueRange{});
      });
  annotateKernel(par, load, kSnapshotKernel);
  ++numKernels;
  return memref::LoadOp::create(b, loc, snapshot, ValueRange{});
}

LogicalResult LinalgToGPULoopsPass::sinkHostLoads(func::FuncOp func) {
  sinkGlobals(func);
  SmallVector<memref::LoadOp> hostLoads;
  func.walk([&](memref::LoadOp load) {
    if (isInsideMappedLoop(load))
      return;
    Value root = getRootBuffer(load.getMemref());
    if (Operation *def = root.getDefiningOp())
      if (isa<memref::AllocaOp, memref::GetGlobalOp>(def))
        return; // host memory
    hostLoads.push_back(load);
  });
  for (memref::LoadOp load : hostLoads) {
    Value root = getRootBuffer(load.getMemref());
    // The host computation that depends on the load: pure ops without
    // regions, in program order.
    llvm::SetVector<Operation *> slice;
    llvm::SetVector<scf::ParallelOp> kernels;
    SmallVector<Value> worklist(load->getResults());
    slice.insert(load);
    Operation *hostUser = nullptr;
    while (!worklist.empty() && !hostUser) {
      Value v = worklist.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (scf::ParallelOp k = getOutermostMappedLoop(user)) {
          kernels.insert(k);
          continue;
        }
        if (user->getBlock() == load->getBlock() && isMemoryEffectFree(user) &&
            user->getNumRegions() == 0 &&
            !user->hasTrait<OpTrait::IsTerminator>()) {
          if (slice.insert(user))
            llvm::append_range(worklist, user->getResults());
          continue;
        }
        hostUser = user;
        break;
      }
    }
    if (hostUser) {
      // The host needs the value (a scalar result, host control flow): read
      // it back through a host buffer, i.e. a device-to-host copy after the
      // GPU lowering. Kernels then get the host value as an argument. An
      // element of a buffer of higher rank is first copied into a 0-d device
      // buffer of its own.
      Value element = load.getResult();
      if (load.getMemRefType().getRank() != 0)
        element = snapshotHostLoad(load);
      auto source = cast<memref::LoadOp>(element.getDefiningOp()).getMemref();
      OpBuilder b(load);
      Location loc = load.getLoc();
      auto hostType = MemRefType::get({}, load.getType());
      Value host = memref::AllocaOp::create(b, loc, hostType);
      memref::CopyOp::create(b, loc, source, host);
      Value v = memref::LoadOp::create(b, loc, host, ValueRange{});
      load.getResult().replaceAllUsesWith(v);
      if (element != load.getResult())
        element.getDefiningOp()->erase();
      load->erase();
      ++numReadBacks;
      continue;
    }
    // Every operand of the slice that is not in it must be available at the
    // start of each kernel (defined above the load): true for values defined
    // before the load; check it anyway.
    for (Operation *op : slice)
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (!slice.contains(def) && def->getBlock() == load->getBlock() &&
              load->isBeforeInBlock(def))
            return op->emitOpError()
                   << "depends on a value defined after the device load it "
                      "uses; cannot move it into the kernels";
    // The loaded buffer must hold the same value when each kernel runs;
    // otherwise the kernels read a copy of the element taken at the load.
    bool overwritten = false;
    for (scf::ParallelOp k : kernels) {
      Operation *anchor = load->getBlock()->findAncestorOpInBlock(*k);
      if (!anchor || anchor->isBeforeInBlock(load))
        return k->emitOpError() << "uses a device value loaded after it";
      // Ops between the load and the kernel, and the op that holds the
      // kernel (a loop runs it again after its own writes; the kernel itself
      // would race with its own readers).
      // A kernel of one thread (host stores) may write what it reads: the
      // value is computed at its start, before its stores.
      for (Operation *it = load->getNextNode(); it && !overwritten;
           it = it == anchor ? nullptr : it->getNextNode())
        overwritten = !(it == k.getOperation() && isSingleThreadKernel(k)) &&
                      mayWriteTo(it, root);
    }
    if (overwritten) {
      Value copy = snapshotHostLoad(load);
      load.getResult().replaceAllUsesWith(copy);
      llvm::SetVector<Operation *> renamed;
      renamed.insert(copy.getDefiningOp());
      renamed.insert(std::next(slice.begin()), slice.end());
      slice = std::move(renamed);
      load->erase();
      ++numSnapshots;
    }
    // Rematerialize the slice at the start of each kernel.
    for (scf::ParallelOp k : kernels) {
      OpBuilder b = OpBuilder::atBlockBegin(k.getBody());
      IRMapping map;
      for (Operation *op : slice)
        b.clone(*op, map);
      for (Operation *op : slice)
        for (Value orig : op->getResults())
          orig.replaceUsesWithIf(map.lookup(orig), [&](OpOperand &use) {
            return k->isProperAncestor(use.getOwner());
          });
      ++numSunk;
    }
    for (Operation *op : llvm::reverse(slice))
      if (op->use_empty())
        op->erase();
  }
  return success();
}

/// Allows fused multiply-add in the floating-point arithmetic of the mapped
/// loops (nvcc's default -fmad=true): `contract` on every op with fastmath
/// flags, so that NVPTX emits fma.rn for a multiply feeding an add.
static void allowContraction(scf::ParallelOp kernel) {
  kernel.walk([](arith::ArithFastMathInterface op) {
    Operation *raw = op.getOperation();
    StringRef name = op.getFastMathAttrName();
    arith::FastMathFlags flags = arith::FastMathFlags::none;
    if (auto attr = raw->getAttrOfType<arith::FastMathFlagsAttr>(name))
      flags = attr.getValue();
    raw->setAttr(
        name, arith::FastMathFlagsAttr::get(
                  raw->getContext(), flags | arith::FastMathFlags::contract));
  });
}

void LinalgToGPULoopsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
    func.emitError() << "block-size must be a multiple of 32 in [32, 1024], "
                        "got "
                     << static_cast<unsigned>(blockSize);
    return signalPassFailure();
  }
  SmallVector<Operation *> work;
  func.walk([&](Operation *op) {
    if (isInsideMappedLoop(op))
      return;
    if (isa<linalg::LinalgOp, memref::CopyOp>(op))
      work.push_back(op);
  });
  // Decide which fills fold before lowering anything: a fill comes before
  // the op that absorbs it.
  llvm::SmallPtrSet<Operation *, 16> absorbed;
  for (Operation *op : work)
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        linalgOp && !isFillLike(linalgOp)) {
      SmallVector<linalg::LinalgOp> fills;
      for (OpOperand &out : linalgOp.getDpsInitsMutable()) {
        linalg::LinalgOp fill = findFoldableFill(linalgOp, out);
        if (fill && !absorbed.insert(fill).second)
          fill = {};
        fills.push_back(fill);
      }
      foldedFills[op] = fills;
    }
  for (Operation *op : work) {
    if (absorbed.contains(op))
      continue;
    LogicalResult r = success();
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      r = lowerCopy(copy);
    else if (failed(lowerTiledContraction(cast<linalg::LinalgOp>(op))) &&
             failed(lowerSplitReduction(cast<linalg::LinalgOp>(op))))
      r = lowerLinalgOp(cast<linalg::LinalgOp>(op));
    if (failed(r))
      return signalPassFailure();
  }
  wrapHostStores(func);
  if (failed(sinkHostLoads(func)))
    return signalPassFailure();
  if (fma)
    func.walk([](scf::ParallelOp op) {
      if (op->hasAttr(kKernelAttr))
        allowContraction(op);
    });
  eraseDeadOps(func.getBody());
  // Whatever else touches device memory on the host is an error: the GPU
  // lowering could not run it.
  WalkResult r = func.walk([&](Operation *op) {
    if (!isa<memref::LoadOp, memref::StoreOp>(op) || isInsideMappedLoop(op))
      return WalkResult::advance();
    Value mem = isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemref()
                                        : cast<memref::StoreOp>(op).getMemref();
    if (Operation *def = getRootBuffer(mem).getDefiningOp())
      if (isa<memref::AllocaOp, memref::GetGlobalOp>(def))
        return WalkResult::advance();
    op->emitOpError() << "accesses device memory on the host after "
                         "ga-linalg-to-gpu-loops";
    return WalkResult::interrupt();
  });
  if (r.wasInterrupted())
    signalPassFailure();
}
