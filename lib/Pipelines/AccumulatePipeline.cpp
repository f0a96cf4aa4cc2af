//===- AccumulatePipeline.cpp - the --ga-accumulate pipeline --------------===//

#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ga;

template <typename ListT>
static SmallVector<std::string> toVector(const ListT &list) {
  return SmallVector<std::string>(list.begin(), list.end());
}

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

void mlir::ga::buildAccumulatePipeline(
    OpPassManager &pm, const AccumulatePipelineOptions &options) {
  if (!options.batchArgs.empty()) {
    MarkBatchArgsOptions mark;
    mark.funcNames = toVector(options.funcNames);
    mark.batchArgs = toVector(options.batchArgs);
    pm.addPass(createMarkBatchArgs(mark));
  }
  CheckTrainingStepOptions check;
  check.microBatches = options.microBatches;
  check.funcNames = toVector(options.funcNames);
  check.allowGhostBatch = options.allowGhostBatch;
  check.recomputeStatistics = options.recomputeStatistics;
  pm.addPass(createCheckTrainingStep(check));

  MicroBatchOptions rewrite;
  rewrite.microBatches = options.microBatches;
  rewrite.funcNames = toVector(options.funcNames);
  rewrite.allowGhostBatch = options.allowGhostBatch;
  rewrite.recomputeStatistics = options.recomputeStatistics;
  rewrite.accumulatorType = options.accumulatorType;
  rewrite.dynamicMicroBatches = options.dynamicMicroBatches;
  pm.addPass(createMicroBatch(rewrite));

  if (options.fuse)
    pm.addPass(createFuseAccumulation());
  pm.addPass(createExpandAccumulate());
  pm.addNestedPass<func::FuncOp>(createCleanupMicroBatchLoops());
}
