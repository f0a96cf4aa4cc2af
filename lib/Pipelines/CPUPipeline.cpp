//===- CPUPipeline.cpp - the --ga-lower-to-cpu pipeline -------------------===//
//
// Lowers a tensor-level training step (the original or the one rewritten by
// --ga-accumulate) to the LLVM dialect for the host CPU. The output runs under
// `mlir-runner`, in-process through `mlir::ExecutionEngine` (ga-verify), or
// ahead of time through `mlir-translate --mlir-to-llvmir | llc`.
//
//===----------------------------------------------------------------------===//

#include "ga/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ga;

namespace {

//===----------------------------------------------------------------------===//
// Helper passes
//===----------------------------------------------------------------------===//

/// Prepares function signatures for the LLVM dialect: requests C-interface
/// wrappers on public function definitions (when asked) and drops the `ga.*`
/// argument attributes, which mean nothing below the tensor level.
struct PrepareCPUFunctionsPass
    : public PassWrapper<PrepareCPUFunctionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareCPUFunctionsPass)

  explicit PrepareCPUFunctionsPass(bool cInterface) : cInterface(cInterface) {}

  StringRef getArgument() const final { return "ga-prepare-cpu-functions"; }
  StringRef getDescription() const final {
    return "Request C wrappers on public functions and drop ga.* argument "
           "attributes before lowering to LLVM";
  }

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (cInterface && fn.isPublic() && !fn.isExternal())
        fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        SmallVector<StringAttr> dropped;
        for (NamedAttribute attr : fn.getArgAttrDict(i)
                                       ? fn.getArgAttrDict(i).getValue()
                                       : ArrayRef<NamedAttribute>())
          if (attr.getName().strref().starts_with("ga."))
            dropped.push_back(attr.getName());
        for (StringAttr name : dropped)
          fn.removeArgAttr(i, name);
      }
    }
  }

  bool cInterface;
};

/// The contract of the pipeline's output: only LLVM dialect ops (and OpenMP
/// ops with openmp=1) inside the module. Catches a lowering that silently
/// leaves an op behind (a partial conversion), with the op's location.
struct VerifyLoweredToLLVMPass
    : public PassWrapper<VerifyLoweredToLLVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyLoweredToLLVMPass)

  StringRef getArgument() const final { return "ga-verify-lowered-to-llvm"; }
  StringRef getDescription() const final {
    return "Check that only LLVM (and OpenMP) dialect ops are left";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module.walk([&](Operation *op) {
      if (op == module.getOperation())
        return WalkResult::advance();
      StringRef dialect = op->getName().getDialectNamespace();
      if (dialect == "llvm" || dialect == "omp")
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' was not lowered to the LLVM dialect by "
                         "ga-lower-to-cpu";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

/// Tensors to memrefs: one-shot bufferization across function boundaries with
/// identity layouts (so that callers pass plain dense descriptors), then the
/// ownership-based deallocation pipeline.
static void addBufferizationStage(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Micro-batch loops may yield fresh buffers when an accumulator cannot be
  // updated in place; deallocation below takes care of them.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  // The clones that deallocation inserts (e.g. to return an argument).
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Linalg on buffers to loops: sequential scf.for, or scf.parallel for the
/// parallel dimensions when OpenMP is requested.
static void addLoopStage(OpPassManager &pm, const LowerToCPUOptions &options) {
  if (options.openmp)
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  else
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Loops and buffers to the LLVM dialect.
static void addLLVMStage(OpPassManager &pm, const LowerToCPUOptions &options) {
  if (options.openmp) {
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
  }
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
  if (!options.openmp)
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(std::make_unique<VerifyLoweredToLLVMPass>());
}

void mlir::ga::buildLowerToCPUPipeline(OpPassManager &pm,
                                       const LowerToCPUOptions &options) {
  pm.addPass(std::make_unique<PrepareCPUFunctionsPass>(options.cInterface));
  // arith/math on whole tensors (`arith.addf %a, %b : tensor<4xf32>`) have no
  // bufferization; as linalg.generic they do.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  addBufferizationStage(pm);
  addLoopStage(pm, options);
  addLLVMStage(pm, options);
}
