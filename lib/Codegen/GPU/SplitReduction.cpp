//===- SplitReduction.cpp - long reductions as two kernels ----------------===//
//
// The split-reduction strategy of --ga-linalg-to-gpu-loops: a reduction that
// is long (at least split-reduction-min elements) into few outputs would
// leave most of the GPU idle with one thread per output. It becomes two
// kernels: the first reduces chunks of the reduction into partial results
// (one thread per chunk and output, starting from the combiner's neutral
// element), the second combines the partial results of each output into the
// output in chunk order, so that the accumulation into a micro-batch
// accumulator stays in that second kernel.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

namespace {
/// How a reduction is split: its static loop sizes, its parallel dimensions
/// in thread order (the output's contiguous dimension fastest), its
/// reduction dimensions, and `splits` chunks of `chunk` elements over the
/// linearized reduction of `length` elements.
struct SplitPlan {
  SmallVector<int64_t> sizes;
  SmallVector<unsigned> order, reductionDims;
  int64_t outputs = 1, length = 1, splits = 0, chunk = 0;
};
} // namespace

/// The plan for `op`, or nullopt when its sizes are not static, it already
/// has enough threads, or it is too short to be worth a second kernel.
static std::optional<SplitPlan> planSplit(linalg::LinalgOp op, OpBuilder &b,
                                          unsigned minLength) {
  SplitPlan plan;
  for (Range r : op.createLoopRanges(b, op.getLoc())) {
    std::optional<int64_t> c = getConstantIntValue(r.size);
    if (!c)
      return std::nullopt; // static sizes only
    plan.sizes.push_back(*c);
  }
  SmallVector<unsigned> parallelDims;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? parallelDims : plan.reductionDims)
        .push_back(d);
  for (unsigned d : parallelDims)
    plan.outputs *= plan.sizes[d];
  for (unsigned d : plan.reductionDims)
    plan.length *= plan.sizes[d];
  const int64_t targetThreads = 16384;
  if (plan.length < static_cast<int64_t>(minLength) ||
      plan.outputs * 2 > targetThreads)
    return std::nullopt;
  // At least 32 elements per chunk, at least two chunks.
  plan.splits = std::max<int64_t>(
      2, std::min<int64_t>(llvm::divideCeil(targetThreads, plan.outputs),
                           llvm::divideCeil(plan.length, 32)));
  plan.chunk = llvm::divideCeil(plan.length, plan.splits);
  plan.splits = llvm::divideCeil(plan.length, plan.chunk);
  // The output's contiguous dimension fastest, as for other kernels.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  std::optional<unsigned> fastest;
  if (outMap.getNumResults() > 0)
    if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
      fastest = dim.getPosition();
  for (unsigned d : parallelDims)
    if (!fastest || d != *fastest)
      plan.order.push_back(d);
  if (fastest)
    plan.order.push_back(*fastest);
  return plan;
}

/// The linear index of the output at loop indices `ivs`, in thread order.
static Value linearOutput(OpBuilder &b, Location loc, const SplitPlan &plan,
                          ArrayRef<Value> ivs) {
  Value lin = constIndex(b, loc, 0);
  for (unsigned d : plan.order)
    lin = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, lin, constIndex(b, loc, plan.sizes[d])),
        ivs[d]);
  return lin;
}

/// The loop indices of the linearized reduction index `r` (the first
/// reduction dimension slowest) at the parallel indices of `ivs`.
static SmallVector<Value> delinearizeReduction(OpBuilder &b, Location loc,
                                               const SplitPlan &plan,
                                               ArrayRef<Value> ivs, Value r) {
  SmallVector<Value> all(ivs);
  Value rest = r;
  for (int64_t k = plan.reductionDims.size() - 1; k >= 0; --k) {
    unsigned d = plan.reductionDims[k];
    if (k == 0) {
      all[d] = rest;
      break;
    }
    Value n = constIndex(b, loc, plan.sizes[d]);
    all[d] = arith::RemUIOp::create(b, loc, rest, n);
    rest = arith::DivUIOp::create(b, loc, rest, n);
  }
  return all;
}

/// Kernel 1 of the split: partial results of each chunk into `partial`.
static scf::ParallelOp buildPartialReductions(OpBuilder &b, unsigned blockSize,
                                              linalg::LinalgOp op,
                                              const SplitPlan &plan,
                                              TypedAttr neutral,
                                              Value partial) {
  // Kernel 1: partial[s][p] = the reduction over chunk s, from the neutral
  // element.
  Location loc = op.getLoc();
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value chunkV = constIndex(b, loc, plan.chunk),
        lengthV = constIndex(b, loc, plan.length);
  SmallVector<Value> threads = {constIndex(b, loc, plan.splits)};
  for (unsigned d : plan.order)
    threads.push_back(constIndex(b, loc, plan.sizes[d]));
  Block *payload = op.getBlock();
  auto part = buildKernelLoop(
      b, loc, blockSize, threads,
      [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(op.getNumLoops(), zero);
        for (auto [k, d] : llvm::enumerate(plan.order))
          ivs[d] = pivs[k + 1];
        Value lo = arith::MulIOp::create(nb, nloc, pivs[0], chunkV);
        Value hi = arith::MinUIOp::create(
            nb, nloc, arith::AddIOp::create(nb, nloc, lo, chunkV), lengthV);
        Value start = arith::ConstantOp::create(nb, nloc, neutral);
        auto loop = scf::ForOp::create(
            nb, nloc, lo, hi, one, ValueRange{start},
            [&](OpBuilder &lb, Location ll, Value r, ValueRange iter) {
              SmallVector<Value> all =
                  delinearizeReduction(lb, ll, plan, ivs, r);
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
            ValueRange{pivs[0], linearOutput(nb, nloc, plan, ivs)});
      });
  annotateKernel(part, op, "reduce_part");
  // The second kernel accumulates.
  part->removeAttr(GADialect::getAccumulatesAttrName());
  return part;
}

/// Kernel 2 of the split: each output combined with its partial results in
/// chunk order (or a folded fill's value first).
static scf::ParallelOp
buildCombinedReduction(OpBuilder &b, unsigned blockSize, linalg::LinalgOp op,
                       const SplitPlan &plan, Operation *combiner,
                       linalg::LinalgOp fill, Value partial) {
  // Kernel 2: out = combine(out, partial[0][p], ..., partial[S-1][p]).
  Location loc = op.getLoc();
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  BlockArgument outArg = op.getRegionOutputArgs()[0];
  SmallVector<Value> threads;
  for (unsigned d : plan.order)
    threads.push_back(constIndex(b, loc, plan.sizes[d]));
  auto combine = buildKernelLoop(
      b, loc, blockSize, threads,
      [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(op.getNumLoops(), zero);
        for (auto [k, d] : llvm::enumerate(plan.order))
          ivs[d] = pivs[k];
        Value acc = fill ? fillValue(nb, fill, {})
                         : loadOperand(nb, nloc, init->get(), outMap, ivs);
        Value p = linearOutput(nb, nloc, plan, ivs);
        auto loop = scf::ForOp::create(
            nb, nloc, zero, constIndex(nb, nloc, plan.splits), one,
            ValueRange{acc},
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
  return combine;
}

LogicalResult FunctionLowering::lowerSplitReduction(linalg::LinalgOp op,
                                                    unsigned minLength) {
  if (minLength == 0 || !op.hasPureBufferSemantics() ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op.hasIndexSemantics())
    return failure();
  // The combiner: out' = combine(out, value).
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral || combiner->getNumOperands() != 2)
    return failure();
  OpBuilder b(op);
  std::optional<SplitPlan> plan = planSplit(op, b, minLength);
  if (!plan)
    return failure();
  Type elt = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  Value partial = memref::AllocOp::create(
      b, op.getLoc(), MemRefType::get({plan->splits, plan->outputs}, elt));
  buildPartialReductions(b, options.blockSize, op, *plan, *neutral, partial);
  SmallVector<linalg::LinalgOp> folded = getFoldedFills(op);
  buildCombinedReduction(b, options.blockSize, op, *plan, combiner, folded[0],
                         partial);
  replaced(op, folded, /*kernels=*/2);
  ++counts.split;
  return success();
}
