//===- ReductionPlacement.cpp - placing reductions in loops ---------------===//
//
// Once every value is classified, each reduction over the batch is placed in
// the loop that accumulates it: data-only statistics (and, with
// recompute-statistics, coupled ones) in earlier loops than their per-sample
// users.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::ga;

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
        if (cls.dependsOnParams && !options.recomputeStatistics)
          continue; // A ghost-batch statistic is recomputed locally.
        unsigned userLevel = 0;
        for (Value userResult : user->getResults())
          userLevel = std::max(userLevel, getClass(userResult).level);
        need = std::min(need, userLevel);
      }
      neededBy[result] = need;
    }
    if (isBatchReduction(&op)) {
      unsigned loop = numLevels;
      for (Value result : op.getResults())
        loop = std::min(loop, neededBy[result] - 1);
      reductionLoops[&op] = loop;
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
    unsigned after = 0;
    for (Value input : getOpInputs(&op))
      after = std::max(after, getAvailableAfter(input));
    for (Value result : op.getResults())
      if (getClass(result).isPostReduction())
        availableAfter[result] = after;
  }
}
