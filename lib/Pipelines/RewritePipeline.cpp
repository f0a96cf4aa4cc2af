//===- RewritePipeline.cpp - the rewrite at a given N ---------------------===//
//
// The passes of --ga-accumulate once N is known (library GAPipelineStages):
// what the --ga-accumulate pipeline adds when N is given, and what
// --ga-choose-micro-batches (GAMemory, above this library and below
// GAPipelines) runs on each step once it has chosen N.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ga;
using mlir::ga::detail::toVector;

void mlir::ga::detail::addCheckAndMark(
    OpPassManager &pm, const AccumulatePipelineOptions &options) {
  pm.addPass(createCheckConstantIndices());
  // Gathers at constant indices that count along their loops read at loop
  // indices, which the batch analysis relates to samples.
  pm.addPass(createFoldIotaOperands());
  if (options.batchArgs.empty())
    return;
  MarkBatchArgsOptions mark;
  mark.funcNames = toVector(options.funcNames);
  mark.batchArgs = toVector(options.batchArgs);
  pm.addPass(createMarkBatchArgs(mark));
}

void mlir::ga::buildMicroBatchRewritePipeline(
    OpPassManager &pm, const AccumulatePipelineOptions &options) {
  detail::addCheckAndMark(pm, options);
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
  // After the rewrite: the copies land in the micro-batch loop next to
  // their users, and the batch analysis has not seen them.
  if (!options.recompute.empty() && options.recompute != "none") {
    RematerializeOptions remat;
    remat.recompute = options.recompute;
    pm.addNestedPass<func::FuncOp>(createRematerialize(remat));
  }
}
