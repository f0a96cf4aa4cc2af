//===- SerializeSmallParallelLoops.cpp - parallel loops worth a region ----===//
//
// --ga-serialize-small-parallel-loops: with OpenMP, each outermost
// scf.parallel becomes a parallel region (a fork and a join of the thread
// team). This pass keeps parallel only the loops whose estimated work pays
// for one, and leaves one flat region per kept loop.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::ga {
#define GEN_PASS_DEF_SERIALIZESMALLPARALLELLOOPS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// What nothing bounds: a call, a loop with bounds known only at run time.
constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

/// The iterations of each dimension of `loop`, or nullopt when a bound or
/// a step is not a constant.
std::optional<SmallVector<uint64_t>>
getDimensionIterations(LoopLikeOpInterface loop) {
  std::optional<SmallVector<OpFoldResult>> lbs = loop.getLoopLowerBounds();
  std::optional<SmallVector<OpFoldResult>> ubs = loop.getLoopUpperBounds();
  std::optional<SmallVector<OpFoldResult>> steps = loop.getLoopSteps();
  if (!lbs || !ubs || !steps)
    return std::nullopt;
  SmallVector<uint64_t> iterations;
  for (auto [lb, ub, step] : llvm::zip_equal(*lbs, *ubs, *steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb);
    std::optional<int64_t> u = getConstantIntValue(ub);
    std::optional<int64_t> s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    iterations.push_back(*u > *l ? llvm::divideCeil(*u - *l, *s) : 0);
  }
  return iterations;
}

/// The iterations of `loop` (the product over its dimensions), or nullopt
/// when a bound or a step is not a constant.
std::optional<uint64_t> getIterations(LoopLikeOpInterface loop) {
  std::optional<SmallVector<uint64_t>> dims = getDimensionIterations(loop);
  if (!dims)
    return std::nullopt;
  uint64_t iterations = 1;
  for (uint64_t trips : *dims)
    iterations = llvm::SaturatingMultiply(iterations, trips);
  return iterations;
}

/// The estimated work of `op`: one per operation, each counted once per
/// iteration of the loops of `op` that enclose it (the branches of an
/// `scf.if` are both counted: an upper bound).
uint64_t estimateWork(Operation *op) {
  if (isa<CallOpInterface>(op))
    return kUnbounded;
  uint64_t body = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block)
        body = llvm::SaturatingAdd(body, estimateWork(&nested));
  auto loop = dyn_cast<LoopLikeOpInterface>(op);
  if (!loop)
    return llvm::SaturatingAdd(body, uint64_t(1));
  std::optional<uint64_t> iterations = getIterations(loop);
  if (!iterations)
    return kUnbounded;
  return llvm::SaturatingMultiply(body, *iterations);
}

struct SerializeSmallParallelLoopsPass
    : public ga::impl::SerializeSmallParallelLoopsBase<
          SerializeSmallParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ParallelOp> worklist = outermostIn(getOperation());
    while (!worklist.empty()) {
      scf::ParallelOp loop = worklist.pop_back_val();
      if (worthARegion(loop)) {
        ++numKept;
        // One flat region: what is nested runs on the thread that runs the
        // iteration.
        // (Post-order: innermost first; a rewritten loop's operations move
        // into the new loops, so the later ones stay valid.)
        SmallVector<scf::ParallelOp> nested;
        loop.getBody()->walk(
            [&](scf::ParallelOp inner) { nested.push_back(inner); });
        for (scf::ParallelOp inner : nested)
          (void)serialize(rewriter, inner);
        splitInnerDimensions(rewriter, loop);
        continue;
      }
      // The loops that become outermost are weighed in turn.
      SmallVector<scf::ParallelOp> inner = outermostIn(loop);
      if (failed(serialize(rewriter, loop)))
        continue;
      llvm::append_range(worklist, inner);
    }
  }

  /// The `scf.parallel` loops under `root` with no `scf.parallel` between
  /// them and `root`.
  static SmallVector<scf::ParallelOp> outermostIn(Operation *root) {
    SmallVector<scf::ParallelOp> loops;
    root->walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      if (loop == root)
        return WalkResult::advance();
      loops.push_back(loop);
      return WalkResult::skip();
    });
    return loops;
  }

  /// Whether `loop` stays parallel: more than one iteration, and at least
  /// `min-work` estimated operations.
  bool worthARegion(scf::ParallelOp loop) {
    std::optional<uint64_t> iterations =
        getIterations(cast<LoopLikeOpInterface>(loop.getOperation()));
    if (iterations && *iterations <= 1)
      return false;
    return estimateWork(loop) >= minWork;
  }

  /// Keeps parallel only the fewest outermost dimensions of `loop` with at
  /// least `parallel-iterations` iterations together; the others run as
  /// `scf.for` loops in each iteration. OpenMP collapses the dimensions of
  /// a worksharing loop into one, and recovers each index by a division
  /// per iteration: in the innermost dimension, per element, where it also
  /// keeps LLVM from vectorizing or unrolling the loop.
  void splitInnerDimensions(IRRewriter &rewriter, scf::ParallelOp loop) {
    std::optional<SmallVector<uint64_t>> trips =
        getDimensionIterations(cast<LoopLikeOpInterface>(loop.getOperation()));
    if (!trips)
      return;
    unsigned outer = 0, dims = loop.getNumLoops();
    uint64_t iterations = 1;
    while (outer < dims && iterations < parallelIterations)
      iterations = llvm::SaturatingMultiply(iterations, (*trips)[outer++]);
    if (outer == dims || loop.getNumResults() != 0)
      return;
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    auto kept = scf::ParallelOp::create(rewriter, loc,
                                        loop.getLowerBound().take_front(outer),
                                        loop.getUpperBound().take_front(outer),
                                        loop.getStep().take_front(outer));
    rewriter.setInsertionPointToStart(kept.getBody());
    auto inner = scf::ParallelOp::create(rewriter, loc,
                                         loop.getLowerBound().drop_front(outer),
                                         loop.getUpperBound().drop_front(outer),
                                         loop.getStep().drop_front(outer));
    SmallVector<Value> ivs(kept.getInductionVars());
    llvm::append_range(ivs, inner.getInductionVars());
    for (auto [from, to] : llvm::zip_equal(loop.getInductionVars(), ivs))
      rewriter.replaceAllUsesWith(from, to);
    Block *body = loop.getBody();
    for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
      rewriter.moveOpBefore(&op, inner.getBody()->getTerminator());
    rewriter.eraseOp(loop);
    (void)serialize(rewriter, inner);
  }

  /// `loop` as nested `scf.for` loops; fails (and the loop stays parallel)
  /// for a loop with reductions.
  LogicalResult serialize(IRRewriter &rewriter, scf::ParallelOp loop) {
    if (loop.getNumResults() != 0)
      return failure();
    rewriter.setInsertionPoint(loop);
    FailureOr<scf::LoopNest> nest =
        scf::parallelForToNestedFors(rewriter, loop);
    if (failed(nest))
      return failure();
    // The stack buffers of an iteration (e.g. ga-split-row-reductions' lane
    // buffer) once before the loops: an iteration's buffer is dead at its
    // end, and a loop lowered to branches would grow the stack by one
    // buffer per iteration.
    for (Operation &op :
         llvm::make_early_inc_range(*nest->loops.back().getBody()))
      if (auto alloca = dyn_cast<memref::AllocaOp>(op);
          alloca && alloca->getNumOperands() == 0)
        rewriter.moveOpBefore(alloca, nest->loops.front());
    ++numSerialized;
    return success();
  }
};

} // namespace
