//===- Registration.cpp - register the ga pipelines -----------------------===//

#include "ga/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

void mlir::ga::registerGAPipelines() {
  PassPipelineRegistration<AccumulatePipelineOptions>(
      "ga-accumulate",
      "Rewrite training steps into micro-batch loops with fused gradient "
      "accumulation (mark, check, micro-batch, fuse, expand, clean up)",
      buildAccumulatePipeline);
  PassPipelineRegistration<LowerToCPUOptions>(
      "ga-lower-to-cpu",
      "Lower a tensor-level step to the LLVM dialect for the host CPU "
      "(bufferize, deallocate, loops, LLVM)",
      buildLowerToCPUPipeline);
  registerGPUPipelines();
  registerDistributedPipelines();
}
