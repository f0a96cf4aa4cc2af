//===- CheckTrainingStep.cpp - the training-step contract -----------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/Transforms/Passes.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CHECKTRAININGSTEP
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct CheckTrainingStepPass
    : public ga::impl::CheckTrainingStepBase<CheckTrainingStepPass> {
  using CheckTrainingStepBase::CheckTrainingStepBase;

  void runOnOperation() override {
    FailureOr<SmallVector<func::FuncOp>> steps =
        collectTrainingSteps(getOperation(), funcNames);
    if (failed(steps))
      return signalPassFailure();
    // Check every step, so that one run reports every problem.
    bool ok = true;
    for (func::FuncOp func : *steps) {
      // The analysis stays cached for --ga-micro-batch, which then does not
      // report the same diagnostics again.
      BatchDependence &analysis =
          getChildAnalysis<BatchDependenceAnalysis>(func).getReported(
              allowGhostBatch, recomputeStatistics);
      ok &= analysis.succeeded() &&
            succeeded(checkMicroBatchCount(analysis, microBatches));
    }
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
