//===- DistributedPipeline.cpp - the --ga-lower-to-cpu-mpi pipeline -------===//
//
// Data-parallel training steps on the CPU: the deferred all-reduces of a
// step rewritten by --ga-accumulate are coalesced into buckets and lowered to
// MPI_Allreduce (upstream `mpi` dialect, MPICH ABI), then the step goes
// through --ga-lower-to-cpu. See docs/Distributed.md.
//
//===----------------------------------------------------------------------===//

#include "ga/Pipelines/Pipelines.h"

#include "ga/Conversion/Passes.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::ga;

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

void mlir::ga::buildLowerToCPUMPIPipeline(OpPassManager &pm,
                                          const LowerToCPUMPIOptions &options) {
  pm.addPass(createCheckConstantIndices());
  // Tensor level: buckets, then the collectives as in-place mpi.allreduce.
  if (options.bucketSize > 0) {
    BucketGradientsOptions bucketing;
    bucketing.bucketSize = options.bucketSize;
    pm.addNestedPass<func::FuncOp>(createBucketGradients(bucketing));
  }
  ConvertGAToMPIOptions mpi;
  mpi.implementation = options.implementation;
  mpi.entry = options.entry;
  pm.addPass(createConvertGAToMPI(mpi));
  // MLIR 22's --convert-to-llvm does not lower mpi.comm_size.
  pm.addPass(createLowerMPICommSize());

  // The host CPU lowering, unchanged (mpi ops lower in --convert-to-llvm).
  LowerToCPUOptions cpu;
  cpu.openmp = options.openmp;
  cpu.numThreads = options.numThreads;
  cpu.cInterface = options.cInterface;
  buildLowerToCPUPipeline(pm, cpu);
}

//===----------------------------------------------------------------------===//
// Pipeline registration
//===----------------------------------------------------------------------===//

void mlir::ga::registerDistributedPipelines() {
  PassPipelineRegistration<LowerToCPUMPIOptions>(
      "ga-lower-to-cpu-mpi",
      "Lower a data-parallel step to the LLVM dialect for the CPU with MPI "
      "collectives (bucket gradients, convert-ga-to-mpi, ga-lower-to-cpu)",
      buildLowerToCPUMPIPipeline);
}
