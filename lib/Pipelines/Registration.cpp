//===- Registration.cpp - register the ga pipelines -----------------------===//

#include "ga/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::ga;

/// Builds --ga-accumulate from its textual options, refusing a run whose
/// options do not say how many micro-batches to make: N = 1 would be a
/// silent no-op rewrite. (buildAccumulatePipeline itself keeps N = 1 as the
/// default of its programmatic callers.)
static LogicalResult buildCheckedAccumulatePipeline(
    OpPassManager &pm, StringRef text,
    function_ref<LogicalResult(const Twine &)> fail) {
  AccumulatePipelineOptions options;
  if (failed(options.parseFromString(text)))
    return failure();
  if (!options.microBatches.hasValue() && !options.microBatchSize.hasValue() &&
      !options.maxMemory.hasValue() && !options.dynamicMicroBatches)
    return fail("ga-accumulate needs the number of micro-batches: "
                "micro-batches=N, micro-batch-size=M (N = ceil(B / M)) or "
                "max-memory=BYTES (the smallest N that fits), or "
                "dynamic-micro-batches=true (N at run time)");
  buildAccumulatePipeline(pm, options);
  return success();
}

void mlir::ga::registerGAPipelines() {
  registerPassPipeline(
      "ga-accumulate",
      "Rewrite training steps into micro-batch loops with fused gradient "
      "accumulation (mark, check, micro-batch, fuse, expand, clean up)",
      buildCheckedAccumulatePipeline,
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(AccumulatePipelineOptions());
      });
  PassPipelineRegistration<LowerToCPUOptions>(
      "ga-lower-to-cpu",
      "Lower a tensor-level step to the LLVM dialect for the host CPU "
      "(bufferize, deallocate, loops, LLVM)",
      buildLowerToCPUPipeline);
  registerGPUPipelines();
  registerDistributedPipelines();
}
