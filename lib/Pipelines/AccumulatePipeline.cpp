//===- AccumulatePipeline.cpp - the --ga-accumulate pipeline --------------===//

#include "PipelineUtils.h"
#include "ga/Memory/Passes.h"
#include "ga/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ga;
using mlir::ga::detail::toVector;

std::string
mlir::ga::printRewriteOptions(const AccumulatePipelineOptions &options) {
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
  // N from the users' words: chosen per step, which then runs the rewrite
  // with its N (see docs/Rationale.md).
  if (options.microBatchSize.hasValue() || options.maxMemory.hasValue()) {
    detail::addCheckAndMark(pm, options);
    ChooseMicroBatchesOptions choose;
    choose.microBatchSize = options.microBatchSize;
    choose.maxMemory = options.maxMemory;
    choose.microBatches =
        options.microBatches.hasValue() ? options.microBatches : 0;
    choose.dynamicMicroBatches = options.dynamicMicroBatches;
    choose.funcNames = toVector(options.funcNames);
    choose.accumulateOptions = printRewriteOptions(options);
    // Unset: chosen with N under a budget.
    choose.recompute =
        options.recompute.empty() ? "auto" : options.recompute.getValue();
    choose.apply = true;
    pm.addPass(createChooseMicroBatches(choose));
    return;
  }
  buildMicroBatchRewritePipeline(pm, options);
}
