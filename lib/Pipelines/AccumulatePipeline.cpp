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

/// The options of `options` that shape the rewrite itself, as a string of
/// --ga-accumulate options.
static std::string getRewriteOptions(const AccumulatePipelineOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "allow-ghost-batch=" << options.allowGhostBatch
     << " recompute-statistics=" << options.recomputeStatistics
     << " fuse=" << options.fuse;
  if (!options.accumulatorType.empty())
    os << " accumulator-type=" << options.accumulatorType;
  return text;
}

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

void mlir::ga::buildAccumulatePipeline(
    OpPassManager &pm, const AccumulatePipelineOptions &options) {
  pm.addPass(createCheckConstantIndices());
  if (!options.batchArgs.empty()) {
    MarkBatchArgsOptions mark;
    mark.funcNames = toVector(options.funcNames);
    mark.batchArgs = toVector(options.batchArgs);
    pm.addPass(createMarkBatchArgs(mark));
  }
  // N from the users' words: chosen per step, which then runs this pipeline
  // with its N (see docs/Rationale.md).
  if (options.microBatchSize.hasValue() || options.maxMemory.hasValue()) {
    ChooseMicroBatchesOptions choose;
    choose.microBatchSize = options.microBatchSize;
    choose.maxMemory = options.maxMemory;
    choose.microBatches =
        options.microBatches.hasValue() ? options.microBatches : 0;
    choose.dynamicMicroBatches = options.dynamicMicroBatches;
    choose.funcNames = toVector(options.funcNames);
    choose.accumulateOptions = getRewriteOptions(options);
    choose.apply = true;
    pm.addPass(createChooseMicroBatches(choose));
    return;
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
