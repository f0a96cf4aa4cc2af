//===- ReductionPlacement.cpp - placing reductions in loops ---------------===//
//
// Once every value is classified, each reduction over the batch is placed in
// the loop that accumulates it: data-only statistics (and, with
// recompute-statistics, coupled ones) in earlier loops than their per-sample
// users.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/Analysis/GradientFree.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::ga;

/// The loop before which the post-reduction value `cls` must be known for
/// its use `use` inside `regionOp`, an scf.if that holds reductions over the
/// batch (placed already: `neededBy` has its results). The op's per-sample
/// work runs in its loop; the init of one of its reductions is combined
/// after that loop; anything else runs where the op's results are needed.
unsigned BatchDependence::getNeedInRegion(
    Operation *regionOp, OpOperand &use, const BatchClass &cls,
    const DenseMap<Value, unsigned> &neededBy) const {
  unsigned loop = getReductionLoop(regionOp);
  Operation *nested = use.getOwner();
  while (nested->getParentOp() != regionOp)
    nested = nested->getParentOp();
  if (isBatchReduction(nested) && use.getOwner() == nested &&
      cast<linalg::LinalgOp>(nested).isDpsInit(&use))
    return loop + 1;
  if (isPerSample(nested))
    return !isHoistedStatistic(use.get(), cls, options)
               ? numLevels + 1 // A ghost-batch statistic, recomputed.
               : loop;
  unsigned need = numLevels + 1;
  for (Value result : regionOp->getResults())
    if (auto it = neededBy.find(result); it != neededBy.end())
      need = std::min(need, it->second);
  return need;
}

/// Places every reduction in the latest loop that precedes all per-sample
/// uses of its value, so that earlier ("statistics") loops compute only what
/// later loops need.
void BatchDependence::placeReductions() {
  Block &body = func.getBody().front();
  unsigned end = numLevels + 1;
  DenseMap<Value, unsigned> neededBy;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    for (OpResult result : op.getResults()) {
      BatchClass cls = getClass(result);
      if (!cls.isPostReduction())
        continue;
      unsigned need = end;
      for (OpOperand &use : result.getUses()) {
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        if (!user || user == body.getTerminator())
          continue;
        if (holdsBatchReductions(user)) {
          need = std::min(need, getNeedInRegion(user, use, cls, neededBy));
          continue;
        }
        if (!isPerSample(user)) {
          for (Value userResult : user->getResults())
            if (auto it = neededBy.find(userResult); it != neededBy.end())
              need = std::min(need, it->second);
          continue;
        }
        // Only the init operand itself: the same value read as an input of
        // the reduction is a per-sample use like any other.
        if (isBatchReduction(user) && use.getOwner() == user &&
            cast<linalg::LinalgOp>(user).isDpsInit(&use) &&
            getClass(user->getResult(0)).kind == BatchClass::Kind::Reduced &&
            cls.kind == BatchClass::Kind::Reduced) {
          // An accumulation chain: combined after the user's loop.
          need = std::min(need, getReductionLoop(user) + 1);
          continue;
        }
        if (!isHoistedStatistic(result, cls, options))
          continue; // A ghost-batch statistic is recomputed locally.
        unsigned userLevel = 0;
        for (Value userResult : user->getResults())
          userLevel = std::max(userLevel, getClass(userResult).level);
        need = std::min(need, userLevel);
      }
      neededBy[result] = need;
    }
    // An scf.if that holds reductions is placed like one reduction: all of
    // them accumulate in one loop, before the first use of its results.
    if (isBatchReduction(&op) || holdsBatchReductions(&op)) {
      unsigned loop = numLevels;
      for (Value result : op.getResults())
        loop = std::min(loop, neededBy[result] - 1);
      reductionLoops[&op] = loop;
      for (Operation *nested : getNestedReductions(&op))
        reductionLoops[nested] = loop;
    }
  }
  // Availability follows the placement forwards.
  for (Operation &op : body.without_terminator()) {
    if (isBatchReduction(&op)) {
      for (Value result : op.getResults())
        availableAfter[result] = reductionLoops[&op];
      continue;
    }
    if (isPerSample(&op))
      continue;
    unsigned after = holdsBatchReductions(&op) ? getReductionLoop(&op) : 0;
    for (Value input : getOpInputs(&op))
      after = std::max(after, getAvailableAfter(input));
    for (Value result : op.getResults())
      if (getClass(result).isPostReduction())
        availableAfter[result] = after;
  }
}
