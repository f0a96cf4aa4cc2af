//===- Registration.cpp - register the ga pipelines -----------------------===//

#include "ga/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

void mlir::ga::registerGAPipelines() {
  PassPipelineRegistration<AccumulatePipelineOptions>(
      "ga-accumulate",
      "Rewrite training steps into micro-batch loops with fused gradient "
      "accumulation (mark, check, micro-batch, fuse, expand, clean up)",
      buildAccumulatePipeline);
}
