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

#include "ga/Conversion/Passes.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

namespace {

//===----------------------------------------------------------------------===//
// Helper passes
//===----------------------------------------------------------------------===//

/// Marks every linalg op that updates a loop-carried accumulator of an
/// `scf.for` (the micro-batch loops) with `ga.accumulates`: the attribute
/// survives bufferization and names the kernel (`..._acc`), so that the tests
/// and bench/gpu_report can check that the accumulation stays inside the
/// producing kernel.
struct MarkAccumulatingOpsPass
    : public PassWrapper<MarkAccumulatingOpsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkAccumulatingOpsPass)

  StringRef getArgument() const final { return "ga-mark-accumulating-ops"; }
  StringRef getDescription() const final {
    return "Mark the linalg ops that update loop-carried accumulators";
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    getOperation().walk([&](scf::ForOp loop) {
      for (BlockArgument acc : loop.getRegionIterArgs()) {
        if (!isa<RankedTensorType>(acc.getType()))
          continue;
        for (OpOperand &use : acc.getUses())
          if (auto dps = dyn_cast<linalg::LinalgOp>(use.getOwner()))
            if (dps.isDpsInit(&use))
              dps->setAttr("ga.accumulates", UnitAttr::get(ctx));
      }
    });
  }
};

/// For ga-verify: keeps the tensor signature of each public function whose
/// body was bufferized and mapped. The mapped function becomes private
/// `@<name>__gpu_loops`; a new `@<name>` with the original tensor types calls
/// it through `bufferization.to_buffer` / `to_tensor`, so that a tool that
/// runs tensor-level steps (ga-verify through ga-lower-to-cpu) runs exactly
/// the mapped loops.
struct WrapTensorBoundaryPass
    : public PassWrapper<WrapTensorBoundaryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(WrapTensorBoundaryPass)

  StringRef getArgument() const final { return "ga-wrap-tensor-boundary"; }
  StringRef getDescription() const final {
    return "Call bufferized public functions through a tensor-typed wrapper";
  }

  static Type toTensor(Type t) {
    if (auto m = dyn_cast<MemRefType>(t))
      return RankedTensorType::get(m.getShape(), m.getElementType());
    return t;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : funcs) {
      if (!fn.isPublic() || fn.isExternal())
        continue;
      FunctionType type = fn.getFunctionType();
      auto hasMemRef = [](TypeRange types) {
        return llvm::any_of(types, llvm::IsaPred<MemRefType>);
      };
      if (!hasMemRef(type.getInputs()) && !hasMemRef(type.getResults()))
        continue;
      for (Type t :
           llvm::concat<const Type>(type.getInputs(), type.getResults()))
        if (auto m = dyn_cast<MemRefType>(t);
            m && !m.getLayout().isIdentity()) {
          fn.emitError() << "tensor-boundary needs identity layouts at the "
                            "function boundary, got "
                         << m;
          return signalPassFailure();
        }
      std::string name = fn.getSymName().str();
      SmallVector<Type> ins, outs;
      for (Type t : type.getInputs())
        ins.push_back(toTensor(t));
      for (Type t : type.getResults())
        outs.push_back(toTensor(t));
      OpBuilder b(fn);
      auto wrapper = func::FuncOp::create(b, fn.getLoc(), name,
                                          b.getFunctionType(ins, outs));
      if (ArrayAttr argAttrs = fn.getAllArgAttrs())
        wrapper.setAllArgAttrs(argAttrs);
      if (failed(symbols.rename(fn, name + "__gpu_loops")))
        return signalPassFailure();
      fn.setPrivate();
      symbols.insert(wrapper);
      Block *entry = wrapper.addEntryBlock();
      b.setInsertionPointToStart(entry);
      SmallVector<Value> args;
      for (auto [arg, t] : llvm::zip(entry->getArguments(), type.getInputs()))
        args.push_back(isa<MemRefType>(t) ? bufferization::ToBufferOp::create(
                                                b, fn.getLoc(), t, arg)
                                                .getResult()
                                          : Value(arg));
      auto call = func::CallOp::create(b, fn.getLoc(), fn, args);
      SmallVector<Value> results;
      for (auto [r, t] : llvm::zip(call.getResults(), outs))
        results.push_back(
            isa<MemRefType>(r.getType())
                ? bufferization::ToTensorOp::create(
                      b, fn.getLoc(), t, r, b.getUnitAttr(), b.getUnitAttr())
                      .getResult()
                : Value(r));
      func::ReturnOp::create(b, fn.getLoc(), results);
    }
  }
};

/// Puts the buffers on the device and names the kernels:
/// * `memref.alloc` / `memref.dealloc` on the host become `gpu.alloc` /
///   `gpu.dealloc`, host `memref.copy` becomes `gpu.memcpy`;
/// * any other host access to a heap buffer is an error (the loop mapping
///   leaves none);
/// * every `gpu.launch` is outlined into `@<func>_kernels` as
///   `@<func>_k<NN>_<what>[_acc]` (`ga.kernel`, `ga.accumulates` of its loop),
///   in program order;
/// * the `ga.*` attributes of ops are dropped.
struct PlaceBuffersOnDevicePass
    : public PassWrapper<PlaceBuffersOnDevicePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PlaceBuffersOnDevicePass)

  StringRef getArgument() const final { return "ga-place-buffers-on-device"; }
  StringRef getDescription() const final {
    return "Device allocations for host buffers, kernel names for launches";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect>();
  }

  static bool isOnHost(Operation *op) {
    return !op->getParentOfType<gpu::LaunchOp>();
  }

  static bool isHostMemory(Value memref) {
    while (Operation *def = memref.getDefiningOp()) {
      if (isa<memref::AllocaOp, memref::GetGlobalOp>(def))
        return true;
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        return false;
      memref = view.getViewSource();
    }
    return false;
  }

  /// True for a private function without kernels that allocates nothing:
  /// host code on the buffers it is given (the `dealloc_helper` that
  /// ownership-based deallocation creates to compare pointers at run time).
  static bool isHostHelper(func::FuncOp fn) {
    if (fn.isPublic() || fn.isExternal())
      return false;
    return !fn.walk([](Operation *op) {
                return isa<gpu::LaunchOp, memref::AllocOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              }).wasInterrupted();
  }

  /// True if every use of `alloc` (through views) is host code that reads or
  /// writes it, frees it or hands it to a host helper: the bookkeeping
  /// buffers of deallocation (pointers and ownership flags), which stay in
  /// host memory.
  static bool isHostOnly(memref::AllocOp alloc) {
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (!isOnHost(user))
          return false;
        if (isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp,
                memref::ExtractAlignedPointerAsIndexOp>(user))
          continue;
        if (auto view = dyn_cast<ViewLikeOpInterface>(user);
            view && view.getViewSource() == v) {
          worklist.push_back(user->getResult(0));
          continue;
        }
        if (auto call = dyn_cast<func::CallOp>(user)) {
          auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr());
          if (callee && isHostHelper(callee))
            continue;
        }
        return false;
      }
    }
    return true;
  }

  LogicalResult placeFunction(func::FuncOp fn) {
    if (isHostHelper(fn))
      return success();
    SmallVector<Operation *> ops;
    llvm::SmallPtrSet<Operation *, 8> hostAllocs;
    fn.walk([&](Operation *op) {
      if (!isOnHost(op))
        return;
      if (auto alloc = dyn_cast<memref::AllocOp>(op);
          alloc && isHostOnly(alloc))
        hostAllocs.insert(op);
      else if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
                   memref::LoadOp, memref::StoreOp>(op))
        ops.push_back(op);
    });
    auto isHostAlloc = [&](Value memref) {
      while (Operation *def = memref.getDefiningOp()) {
        if (hostAllocs.contains(def))
          return true;
        auto view = dyn_cast<ViewLikeOpInterface>(def);
        if (!view)
          return false;
        memref = view.getViewSource();
      }
      return false;
    };
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto dev = gpu::AllocOp::create(
            b, op->getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            ValueRange{}, alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        alloc.replaceAllUsesWith(dev.getMemref());
        op->erase();
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (isHostAlloc(dealloc.getMemref()))
          continue;
        gpu::DeallocOp::create(b, op->getLoc(), Type(), ValueRange{},
                               dealloc.getMemref());
        op->erase();
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        auto src = cast<MemRefType>(copy.getSource().getType());
        auto dst = cast<MemRefType>(copy.getTarget().getType());
        if (!src.getLayout().isIdentity() || !dst.getLayout().isIdentity())
          return op->emitOpError()
                 << "copies a strided view on the host; expected "
                    "ga-linalg-to-gpu-loops to turn it into a kernel";
        gpu::MemcpyOp::create(b, op->getLoc(), Type(), ValueRange{},
                              copy.getTarget(), copy.getSource());
        op->erase();
      } else {
        Value mem = isa<memref::LoadOp>(op)
                        ? cast<memref::LoadOp>(op).getMemref()
                        : cast<memref::StoreOp>(op).getMemref();
        if (!isHostMemory(mem) && !isHostAlloc(mem))
          return op->emitOpError()
                 << "accesses device memory on the host; the GPU lowering "
                    "expects every such access inside a kernel";
      }
    }

    // Kernel names, in program order.
    std::string moduleName = (fn.getSymName() + "_kernels").str();
    unsigned counter = 0;
    fn.walk<WalkOrder::PreOrder>([&](gpu::LaunchOp launch) {
      std::string what = "kernel";
      if (auto kind = launch->getAttrOfType<StringAttr>("ga.kernel"))
        what = kind.str();
      std::string name =
          llvm::formatv("{0}_k{1:2}_{2}{3}", fn.getSymName(), counter++, what,
                        launch->hasAttr("ga.accumulates") ? "_acc" : "")
              .str();
      std::replace(name.begin(), name.end(), '.', '_');
      launch.setFunctionAttr(FlatSymbolRefAttr::get(launch.getContext(), name));
      launch.setModuleAttr(
          FlatSymbolRefAttr::get(launch.getContext(), moduleName));
      return WalkResult::skip();
    });
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(placeFunction(fn)))
        return signalPassFailure();
    // ga.* attributes of ops mean nothing below this point (those of
    // function arguments are dropped by ga-prepare-functions-for-llvm).
    getOperation().walk([](Operation *op) {
      SmallVector<StringAttr> names;
      for (NamedAttribute a : op->getDiscardableAttrs())
        if (a.getName().strref().starts_with("ga."))
          names.push_back(a.getName());
      for (StringAttr n : names)
        op->removeDiscardableAttr(n);
    });
  }
};

/// Kernels that use math functions (exp, log, tanh, ...) call libdevice,
/// which NVVM serialization links from the CUDA toolkit named by CUDA_ROOT,
/// CUDA_HOME or CUDA_PATH (Debian's MLIR has no built-in default). Without
/// one, ptxas fails much later with "Unresolved extern function '__nv_expf'";
/// say what is missing instead.
struct CheckCUDAToolkitPass
    : public PassWrapper<CheckCUDAToolkitPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckCUDAToolkitPass)

  StringRef getArgument() const final { return "ga-check-cuda-toolkit"; }
  StringRef getDescription() const final {
    return "Check that libdevice can be found when kernels need it";
  }

  void runOnOperation() override {
    for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
      if (const char *v = std::getenv(var); v && *v)
        return;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      module.walk(
          [&](Operation *op) {
            if (op->getName().getDialectNamespace() != "math")
              return WalkResult::advance();
            op->emitError()
                << "this kernel calls libdevice for '" << op->getName()
                << "': set CUDA_HOME (or CUDA_ROOT, CUDA_PATH) to the CUDA "
                   "toolkit so that NVVM serialization can link "
                   "nvvm/libdevice/libdevice.10.bc";
            signalPassFailure();
            return WalkResult::interrupt();
          });
    });
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

/// Tensors to buffers: one-shot bufferization across function boundaries
/// with identity layouts. Accumulators carried by the micro-batch loops are
/// updated in place by their producers (no iter_args after bufferization).
static void addGPUBufferizationStage(OpPassManager &pm,
                                     const LowerToGPULoopsOptions &options) {
  pm.addNestedPass<func::FuncOp>(createDecomposeAggregatedOps());
  if (options.fuseElementwise) {
    LinalgMorphOpsPassOptions generalize;
    generalize.namedToGeneric = true;
    pm.addNestedPass<func::FuncOp>(createLinalgMorphOpsPass(generalize));
    pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  }
  pm.addPass(std::make_unique<MarkAccumulatingOpsPass>());
  // A fill per writer instead of a copy kernel per writer (and micro-batch);
  // fills are generics here when fuse-elementwise generalized them.
  pm.addNestedPass<func::FuncOp>(createDuplicateSharedFillsPass(
      FillKind::FillLike, FillPlacement::KeepFirstCopyAtUser));
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
}

void mlir::ga::buildLowerToGPULoopsPipeline(
    OpPassManager &pm, const LowerToGPULoopsOptions &options) {
  addGPUBufferizationStage(pm, options);
  if (options.cublas)
    pm.addPass(createContractionsToCublasLt());
  LinalgToGPULoopsOptions mapping;
  mapping.blockSize = options.blockSize;
  mapping.gemmTile = options.gemmTile;
  mapping.gemmMinReduction = options.gemmMinReduction;
  mapping.fma = options.fma;
  mapping.splitReductionMin = options.splitReductionMin;
  pm.addNestedPass<func::FuncOp>(createLinalgToGPULoops(mapping));
  // No canonicalization from here until the loops are launches: it would
  // fold single-block loops and drop their mapping.
  pm.addPass(createCSEPass());
  if (options.tensorBoundary)
    pm.addPass(std::make_unique<WrapTensorBoundaryPass>());
}

/// Mapped loops to outlined kernels on device buffers.
static void addKernelStage(OpPassManager &pm,
                           const LowerToNVVMOptions &options) {
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
  pm.addPass(std::make_unique<PlaceBuffersOnDevicePass>());
  pm.addPass(createPrepareFunctionsForLLVMPass(options.cInterface));
  // Constants and index math into the kernels: divisors and bounds become
  // immediates (no 64-bit division by a kernel argument).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Launches, allocations and copies on one stream for the whole step, the
  // micro-batch loops enqueued without waiting; the host waits only where it
  // needs a result.
  pm.addPass(createGPUSingleStream());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::ga::buildLowerToGPUKernelsPipeline(
    OpPassManager &pm, const LowerToNVVMOptions &options) {
  // Data-parallel steps: the all-reduces of the accumulators become NCCL
  // calls on their device buffers (nothing changes without them).
  pm.addPass(createConvertGAToNCCL());
  LowerToGPULoopsOptions loops;
  loops.blockSize = options.blockSize;
  loops.fuseElementwise = options.fuseElementwise;
  loops.gemmTile = options.gemmTile;
  loops.gemmMinReduction = options.gemmMinReduction;
  loops.fma = options.fma;
  loops.splitReductionMin = options.splitReductionMin;
  loops.tensorBoundary = false;
  loops.cublas = options.cublas;
  buildLowerToGPULoopsPipeline(pm, loops);
  addKernelStage(pm, options);
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
  pm.addPass(std::make_unique<CheckCUDAToolkitPass>());
  // Host control flow as branches before the upstream NVVM pipeline: its
  // convert-nvgpu-to-nvvm refuses an scf.for that carries a stream token.
  pm.addNestedPass<func::FuncOp>(createSCFToControlFlowPass());
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  // The contract of the output: host code in the LLVM dialect, kernels as
  // gpu.binary, launches as gpu.launch_func.
  pm.addPass(createVerifyLoweredPass(
      "ga-verify-lowered-to-nvvm", "by ga-lower-to-nvvm", [](Operation *op) {
        return isa<gpu::BinaryOp, gpu::LaunchFuncOp>(op) ||
               op->getName().getDialectNamespace() == "llvm";
      }));
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
