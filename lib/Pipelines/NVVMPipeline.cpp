//===- NVVMPipeline.cpp - the --ga-lower-to-nvvm pipeline -----------------===//
//
// Lowers a tensor-level training step (usually the output of --ga-accumulate)
// to host LLVM dialect with the kernels embedded as a GPU binary, in two
// stages that are registered on their own:
//
// 1. --ga-lower-to-gpu-loops: bufferize across function boundaries (identity
//    layouts; gradient accumulators updated in place), then lower every linalg
//    op to one `scf.parallel` mapped to blocks and threads
//    (--ga-linalg-to-gpu-loops). This is the form ga-verify runs on the CPU
//    (option tensor-boundary) to prove the mapped IR exact.
// 2. --ga-lower-to-nvvm: stage 1, then the loops become `gpu.launch` ops,
//    buffers become device allocations, kernels are outlined into one GPU
//    module per function and the upstream `gpu::buildLowerToNVVMPassPipeline`
//    compiles them to a cubin/fatbin/PTX and the host code to LLVM.
//
// Host/device contract of the output: every memref argument and result of
// the step is device memory (the caller allocates it, e.g. with mgpuMemAlloc
// from lib/Runtime/CUDA, and frees results with mgpuMemFree). Arguments may
// be updated in place. Scalars are passed by value.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"

#include "ga/Codegen/Common/Passes.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ga;

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

/// Tensors to buffers: one-shot bufferization across function boundaries
/// with identity layouts. Accumulators carried by the micro-batch loops are
/// updated in place by their producers (no iter_args after bufferization).
/// Then matrix products to `ga.blas_matmul` ops (cublas=1) and every other
/// linalg op to mapped loops.
template <typename Options>
static void addLoopStage(OpPassManager &pm, const Options &options) {
  pm.addPass(createCheckConstantIndices());
  // Grouped products (MoE experts) as gathers in kernels, not a host loop
  // over the groups.
  pm.addNestedPass<func::FuncOp>(createDecomposeGroupedGather());
  pm.addNestedPass<func::FuncOp>(createDecomposeAggregatedOps());
  // Convolutions as im2col copies and matrix products (cuBLASLt calls).
  if (options.cublas)
    pm.addNestedPass<func::FuncOp>(createConvolutionsToProducts());
  if (options.fuseElementwise) {
    LinalgMorphOpsPassOptions generalize;
    generalize.namedToGeneric = true;
    pm.addNestedPass<func::FuncOp>(createLinalgMorphOpsPass(generalize));
  }
  // Products first: the contractions cuBLASLt takes absorb their transposes
  // and are marked, so that fusion leaves them (and the reshapes around
  // them) alone.
  if (options.cublas) {
    // Products of bf16 values extended to f32 (attention's scores under
    // autocast) on the bf16 values: tensor-core products, exact.
    pm.addNestedPass<func::FuncOp>(createNarrowProductOperands());
    pm.addNestedPass<func::FuncOp>(createIsolateLibraryProducts());
  }
  // Unit dimensions out of the way of fusion and row kernels (keepdim
  // reductions, broadcasts through a unit dimension); products and
  // accumulator updates keep theirs.
  if (options.fuseElementwise && options.foldUnitDims)
    pm.addNestedPass<func::FuncOp>(createFoldUnitDims());
  if (options.fuseElementwise) {
    // Not upstream's pass: it miscompiles a producer that reads its init
    // (docs/Rationale.md).
    FuseElementwiseOptions fusion;
    fusion.recomputeShared = options.recomputeShared;
    fusion.keepProductEpilogues = options.cublas;
    pm.addNestedPass<func::FuncOp>(createFuseElementwise(fusion));
  }
  pm.addPass(createMarkAccumulatingOps());
  // A fill per writer instead of a copy kernel per writer (and micro-batch);
  // fills are generics here when fuse-elementwise generalized them.
  DuplicateSharedFillsOptions fills;
  fills.kind = FillKind::FillLike;
  fills.placement = FillPlacement::KeepFirstCopyAtUser;
  pm.addNestedPass<func::FuncOp>(createDuplicateSharedFills(fills));
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createDuplicateSharedEmpties());
  // A loop-carried value recomputed into a fresh tensor (a gradient
  // accumulator through a transpose) keeps one buffer across iterations, and
  // an update written in place (`bufferization.materialize_in_destination`,
  // --ga-write-results-in-place) is computed into its argument's buffer.
  // Not upstream's eliminate-empty-tensors: computing into slices of the
  // loop's stored values would keep their library products from being
  // staged for a CUDA graph.
  pm.addNestedPass<func::FuncOp>(createReuseReplacedBuffers());
  ga::detail::addStepBufferization(pm);
  // A private function's results that bufferized to one of its arguments
  // are dropped (its callers read the argument's buffer): what is left of
  // the in-place form's @<step>_in_place returns only what is not an update.
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  if (options.cublas)
    pm.addPass(createContractionsToCublasLt());
  LinalgToGPULoopsOptions mapping;
  mapping.blockSize = options.blockSize;
  mapping.gemmTile = options.gemmTile;
  mapping.gemmMinReduction = options.gemmMinReduction;
  mapping.fma = options.fma;
  mapping.splitReductionMin = options.splitReductionMin;
  mapping.splitRowReductionMin = options.splitRowReductionMin;
  mapping.fuseRows = options.fuseRows;
  mapping.rowWarpMin = options.rowWarpMin;
  mapping.rowBlockMin = options.rowBlockMin;
  mapping.rowMinRows = options.rowMinRows;
  mapping.fuseSiblings = options.fuseSiblings;
  pm.addNestedPass<func::FuncOp>(createLinalgToGPULoops(mapping));
  // CUDA graphs: the micro-batch index in a device buffer, so that the body
  // of the loop is the same in every iteration (checked on the CPU here).
  if (options.cudaGraphs)
    pm.addNestedPass<func::FuncOp>(createDeviceIterationIndex());
  // No canonicalization from here until the loops are launches: it would
  // fold single-block loops and drop their mapping.
  pm.addPass(createCSEPass());
}

void mlir::ga::buildLowerToGPULoopsPipeline(
    OpPassManager &pm, const LowerToGPULoopsOptions &options) {
  addLoopStage(pm, options);
  // The products as calls with a null stream (the CUDA default stream): the
  // loop stage runs on the CPU against libga_cublaslt_cpu.so.
  if (options.libraryCalls)
    pm.addPass(createLowerLibraryOps());
  if (options.tensorBoundary)
    pm.addPass(createWrapTensorBoundary());
}

/// Mapped loops to launches on device buffers: the allocations as they are
/// final (`gpu.alloc`/`gpu.dealloc`, hoisted out of the micro-batch loops),
/// which the static memory report of a GPU step measures.
static void addDeviceBufferStage(OpPassManager &pm) {
  // Buffers of static size live across the micro-batch loop instead of being
  // allocated and freed in every iteration (block-scope buffers of tiled
  // contractions too: ga-cooperative-loops-to-gpu makes them shared memory).
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  // Deallocation while the kernels are still loops (ownership-based
  // deallocation knows nothing of gpu.barrier), without canonicalization
  // (it would fold single-block loops and drop their mapping).
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Tiled contractions (block-scope buffers, barriers) first: upstream's
  // conversion maps perfectly nested loops only.
  pm.addNestedPass<func::FuncOp>(createCooperativeLoopsToGPU());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createPlaceBuffersOnDevice());
}

/// Launches on device buffers to outlined kernels, one stream, graphs and
/// library calls.
static void addKernelStage(OpPassManager &pm,
                           const LowerToNVVMOptions &options) {
  addDeviceBufferStage(pm);
  PrepareFunctionsForLLVMOptions prepare;
  prepare.cInterface = options.cInterface;
  pm.addPass(createPrepareFunctionsForLLVM(prepare));
  // Constants and index math into the kernels: divisors and bounds become
  // immediates (no 64-bit division by a kernel argument).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Launches, allocations and copies on one stream for the whole step, the
  // micro-batch loops enqueued without waiting; the host waits only where it
  // needs a result.
  pm.addPass(createGPUSingleStream());
  // Data-parallel steps: each bucket's all-reduce in the peeled last
  // micro-batch, after its last producer, on a communication stream; before
  // the capture, so that the loop that remains holds stream-ordered work.
  pm.addPass(createOverlapAllReduce());
  // The body of each such loop recorded once, launched per micro-batch.
  if (options.cudaGraphs)
    pm.addPass(createCaptureCudaGraphs());
  // The library ops as runtime calls on the step's stream, the last stage
  // before the LLVM conversion: the passes above order them by their tokens.
  // Without (library-calls=0), the module is left as the kernel report reads
  // it: every launch, product and capture still an op.
  if (!options.libraryCalls)
    return;
  pm.addPass(createLowerLibraryOps());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::ga::buildLowerToGPUKernelsPipeline(
    OpPassManager &pm, const LowerToNVVMOptions &options) {
  // Data-parallel steps: the all-reduces of the accumulators become NCCL
  // calls on their device buffers (nothing changes without them).
  pm.addPass(createConvertGAToNCCL());
  addLoopStage(pm, options);
  addKernelStage(pm, options);
}

void mlir::ga::buildBufferizeForGPUPipeline(OpPassManager &pm,
                                            const LowerToNVVMOptions &options) {
  pm.addPass(createConvertGAToNCCL());
  addLoopStage(pm, options);
  addDeviceBufferStage(pm);
}

void mlir::ga::buildLowerToNVVMPipeline(OpPassManager &pm,
                                        const LowerToNVVMOptions &options) {
  buildLowerToGPUKernelsPipeline(pm, options);

  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  nvvm.cmdOptions = options.ptxasOptions;
  pm.addPass(createCheckCUDAToolkit());
  // Host control flow as branches before the upstream NVVM pipeline: its
  // convert-nvgpu-to-nvvm refuses an scf.for that carries a stream token.
  pm.addNestedPass<func::FuncOp>(createSCFToControlFlowPass());
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  // One entry point per C wrapper that takes its parameters through one
  // array (ctypes passes at most 1024 arguments).
  if (options.cInterface)
    pm.addPass(createEmitPackedInterfaces());
  // The contract of the output: host code in the LLVM dialect, kernels as
  // gpu.binary, launches as gpu.launch_func.
  VerifyLoweredOptions contract;
  contract.allowedDialects = {"llvm"};
  contract.allowedOps = {"gpu.binary", "gpu.launch_func"};
  contract.byWhat = "by ga-lower-to-nvvm";
  pm.addPass(createVerifyLowered(contract));
}

//===----------------------------------------------------------------------===//
// Pipeline registration
//===----------------------------------------------------------------------===//

void mlir::ga::registerGPUPipelines() {
  PassPipelineRegistration<LowerToGPULoopsOptions>(
      "ga-lower-to-gpu-loops",
      "Bufferize a tensor-level step (accumulators in place) and map every "
      "linalg op to an scf.parallel over GPU blocks and threads (runs on the "
      "CPU too; tensor-boundary=1 for ga-verify)",
      buildLowerToGPULoopsPipeline);
  PassPipelineRegistration<LowerToNVVMOptions>(
      "ga-lower-to-gpu-kernels",
      "The first two stages of ga-lower-to-nvvm: mapped loops as outlined "
      "gpu.func kernels, launched by host func/scf code on device buffers "
      "(the form the kernel-structure tests and bench/gpu_report read; "
      "target options are unused)",
      buildLowerToGPUKernelsPipeline);
  PassPipelineRegistration<LowerToNVVMOptions>(
      "ga-lower-to-nvvm",
      "Lower a tensor-level step to host LLVM dialect with its kernels "
      "compiled through NVVM into an embedded GPU binary (mgpu* runtime "
      "calls; lib/Runtime/CUDA)",
      buildLowerToNVVMPipeline);
}
