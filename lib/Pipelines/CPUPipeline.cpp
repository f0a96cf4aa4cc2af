//===- CPUPipeline.cpp - the --ga-lower-to-cpu pipeline -------------------===//
//
// Lowers a tensor-level training step (the original or the one rewritten by
// --ga-accumulate) to the LLVM dialect for the host CPU. The output runs under
// `mlir-runner`, in-process through `mlir::ExecutionEngine` (ga-verify), or
// ahead of time through `mlir-translate --mlir-to-llvmir | llc`.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"

#include "ga/Codegen/CPU/Passes.h"
#include "ga/Codegen/Common/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ga;

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

/// Tensors to memrefs: one-shot bufferization across function boundaries with
/// identity layouts (so that callers pass plain dense descriptors), then the
/// ownership-based deallocation pipeline.
static void addBufferizationStage(OpPassManager &pm,
                                  const LowerToCPUOptions &options) {
  ga::detail::addStepBufferization(pm);
  // A private function's results that bufferized to one of its arguments
  // (an update written in place, e.g. `bufferization.materialize_in_destination
  // %new in %arg`) are dropped: its callers read the argument's buffer
  // instead of receiving a copy or a clone of it.
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  if (options.outParams) {
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    // Results computed into a fresh buffer are computed into the caller's.
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  // One allocation per step instead of one per micro-batch.
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  // Temporaries dead before another is written share its storage: at byte
  // offsets of one arena when their sizes differ.
  if (options.shareBuffers) {
    ShareBuffersOptions share;
    share.pack = true;
    pm.addNestedPass<func::FuncOp>(createShareBuffers(share));
  }
  if (options.staticTemporaries)
    pm.addPass(createPromoteBuffersToGlobals());
  bufferization::buildBufferDeallocationPipeline(pm);
  // The clones that deallocation inserts (e.g. to return an argument).
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Linalg on buffers to loops (matrix products to CBLAS first, when asked):
/// sequential scf.for, or scf.parallel for the parallel dimensions when
/// OpenMP is requested.
static void addLoopStage(OpPassManager &pm, const LowerToCPUOptions &options) {
  if (options.blas) {
    // With OpenMP on a known number of threads, large products on the
    // step's own threads, split in as many blocks: one pool for the loops
    // and the products (docs/CPU.md, "One pool").
    ConvertLinalgToBLASOptions blas;
    if (options.openmp) {
      blas.parallelBlocks = options.numThreads;
      blas.minParallelWork = options.minParallelWork;
    }
    pm.addPass(createConvertLinalgToBLAS(blas));
  }
  if (options.vectorWidth) {
    // Row reductions (softmax, LayerNorm, cross-entropy statistics) into
    // lanes, which the vectorizer below takes; with OpenMP, rows in parallel,
    // each with its own lane buffer.
    if (options.splitRowReductions) {
      SplitRowReductionsOptions split;
      split.vectorWidth = options.vectorWidth;
      split.parallelRows = options.openmp;
      pm.addNestedPass<func::FuncOp>(createSplitRowReductions(split));
    }
    VectorizeLinalgOptions vectorize;
    vectorize.vectorWidth = options.vectorWidth;
    vectorize.parallelLoops = options.openmp;
    pm.addNestedPass<func::FuncOp>(createVectorizeLinalg(vectorize));
    // exp, erf, tanh, ... on those vectors as vector polynomials: LLVM would
    // split them into one libm call per element. Scalars too (`scalars`):
    // a value computed in a vectorized loop and again in a scalar one (a
    // recomputed copy, a peeled iteration) must round alike.
    if (options.approximateMath) {
      VectorizeMathOptions math;
      math.scalars = true;
      pm.addNestedPass<func::FuncOp>(createVectorizeMath(math));
    }
  }
  if (options.openmp)
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  else
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // One OpenMP region per loop that pays for a fork and a join, each flat.
  if (options.openmp) {
    SerializeSmallParallelLoopsOptions serialize;
    serialize.minWork = options.minParallelWork;
    pm.addNestedPass<func::FuncOp>(
        createSerializeSmallParallelLoops(serialize));
  }
}

/// Loops and buffers to the LLVM dialect.
static void addLLVMStage(OpPassManager &pm, const LowerToCPUOptions &options) {
  if (options.openmp) {
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
  }
  // What ga-vectorize-linalg leaves: 1-d transfers and masks.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16/f16 conversions as integer arithmetic: no compiler-rt needed.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // With OpenMP, memref must reach LLVM before scf.parallel regions are
  // flattened to cf (memref.alloca_scope inside omp.wsloop needs one block).
  if (options.openmp)
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  // Math with an LLVM intrinsic first; the rest (tanh, erf, ...) as libm calls.
  ConvertMathToLLVMPassOptions math;
  math.approximateLog1p = false;
  pm.addPass(createConvertMathToLLVMPass(math));
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  if (!options.openmp)
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  // One entry point per C wrapper that takes its parameters through one
  // array (ctypes passes at most 1024 arguments).
  if (options.cInterface)
    pm.addPass(createEmitPackedInterfaces());
  // The contract of the output: only LLVM (and, with openmp=1, OpenMP) ops.
  VerifyLoweredOptions contract;
  contract.allowedDialects = {"llvm", "omp"};
  contract.byWhat = "to the LLVM dialect by ga-lower-to-cpu";
  pm.addPass(createVerifyLowered(contract));
}

void mlir::ga::buildBufferizeForCPUPipeline(OpPassManager &pm,
                                            const LowerToCPUOptions &options) {
  // GPU library ops (lowered by --ga-lower-library-ops only) are refused at
  // the op, before any conversion meets them.
  pm.addPass(createCheckLibraryOpsLowered());
  pm.addPass(createCheckConstantIndices());
  PrepareFunctionsForLLVMOptions prepare;
  prepare.cInterface = options.cInterface;
  pm.addPass(createPrepareFunctionsForLLVM(prepare));
  // linalg.softmax has no loop lowering; its decomposition into generics has.
  pm.addNestedPass<func::FuncOp>(createDecomposeAggregatedOps());
  // Convolutions as im2col copies and matrix products (CBLAS calls).
  if (options.blas)
    pm.addNestedPass<func::FuncOp>(createConvolutionsToProducts());
  // Depthwise ones as one window generic each (vectorized; blas=0: loops).
  if (options.blas)
    pm.addNestedPass<func::FuncOp>(createUnrollConvolutionWindows());
  // arith/math on whole tensors (`arith.addf %a, %b : tensor<4xf32>`) have no
  // bufferization; as linalg.generic they do.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // Transposes that move no data as reshapes (views), and the collapses of
  // transposes as transposes of collapses, which the products below absorb.
  pm.addNestedPass<func::FuncOp>(createRegroupTransposes());
  // Products first: the contractions CBLAS takes absorb their transposes and
  // are marked, so that fusion leaves them (and the reshapes around them)
  // alone.
  if (options.blas)
    pm.addNestedPass<func::FuncOp>(createIsolateLibraryProducts());
  if (options.blas)
    pm.addNestedPass<func::FuncOp>(createConcatenateProducts());
  if (options.fuseElementwise) {
    // A 0-d hyper-parameter read as a scalar is loaded once, not per element.
    pm.addNestedPass<func::FuncOp>(createLinalgInlineScalarOperandsPass());
    pm.addNestedPass<func::FuncOp>(createHoistInvariantExtracts());
    // Upstream's element-wise fusion less the fusion it miscompiles (a
    // producer reading its init under a consumer's extra loop, Rationale.md).
    // Not fuse-kept yet: it raised the peak of the linear regression of
    // ga-memory-report.mlir (docs/Results.md, "fuse-kept").
    pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  }
  if (options.blas)
    pm.addNestedPass<func::FuncOp>(createPeelFirstAccumulation());
  // Masks (i1 tensors) as bytes of 0 and 1, which ga-vectorize-linalg reads
  // and writes as vectors; an i1 buffer it must leave scalar.
  if (options.vectorWidth)
    pm.addNestedPass<func::FuncOp>(createWidenI1Tensors());
  // A fill per use, next to it (a zero fill before a matrix product becomes
  // beta = 0 with blas=1).
  DuplicateSharedFillsOptions fills;
  fills.kind = FillKind::Named;
  fills.placement = FillPlacement::NextToEachUser;
  pm.addNestedPass<func::FuncOp>(createDuplicateSharedFills(fills));
  // One tensor.empty per group of uses (bufferization's analysis is
  // quadratic in the uses of one value), before the elimination below,
  // which is quadratic in them too.
  pm.addNestedPass<func::FuncOp>(createDuplicateSharedEmpties());
  // A loop-carried value recomputed into a fresh tensor (a gradient
  // accumulator through a transpose) keeps one buffer across iterations.
  pm.addNestedPass<func::FuncOp>(createReuseReplacedBuffers());
  // Ops whose result is inserted into another tensor (insert_slice, or
  // materialize_in_destination: an update written in place) compute into
  // that tensor, not a fresh buffer then copied. After fusion: its patterns
  // give every op whose init is unread a fresh tensor.empty again.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  addBufferizationStage(pm, options);
}

void mlir::ga::buildLowerBufferizedForCPUPipeline(
    OpPassManager &pm, const LowerToCPUOptions &options) {
  // The host collectives as runtime calls on raw addresses, now that the
  // buffers' lifetimes are settled (--convert-ga-to-host-collectives).
  pm.addPass(createLowerHostCollectives());
  addLoopStage(pm, options);
  addLLVMStage(pm, options);
}

void mlir::ga::buildLowerToCPUPipeline(OpPassManager &pm,
                                       const LowerToCPUOptions &options) {
  buildBufferizeForCPUPipeline(pm, options);
  buildLowerBufferizedForCPUPipeline(pm, options);
}
