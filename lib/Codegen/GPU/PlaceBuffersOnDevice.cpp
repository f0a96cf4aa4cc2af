//===- PlaceBuffersOnDevice.cpp - device buffers and kernel names ---------===//
//
// --ga-place-buffers-on-device: after the mapped loops are `gpu.launch` ops,
// the buffers they use must be device memory. Host allocations, frees and
// copies become their `gpu` counterparts (the bookkeeping buffers of
// deallocation excepted), any other host access of device memory is an
// error, and every launch gets the name of the kernel it will be outlined
// into.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::ga {
#define GEN_PASS_DEF_PLACEBUFFERSONDEVICE
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

static bool isOnHost(Operation *op) {
  return !op->getParentOfType<gpu::LaunchOp>();
}

/// True for a private function without kernels that allocates nothing: host
/// code on the buffers it is given (the `dealloc_helper` that ownership-based
/// deallocation creates to compare pointers at run time).
static bool isHostHelper(func::FuncOp fn) {
  if (fn.isPublic() || fn.isExternal())
    return false;
  return !fn.walk([](Operation *op) {
              return isa<gpu::LaunchOp, memref::AllocOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            }).wasInterrupted();
}

/// True if the address `pointer` (an `extract_aligned_pointer_as_index`)
/// reaches, through casts, a call of anything but a host helper, which may
/// read or write the buffer on the device. Deallocation compares such
/// addresses on the host. The library ops (`ga.blas_matmul`,
/// `ga.nccl_all_reduce`) are device uses of their memrefs like launches and
/// become calls only after this pass; a raw call is taken as one too.
static bool reachesLibraryCall(Value pointer) {
  SmallVector<Value> worklist{pointer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<arith::IndexCastOp, arith::IndexCastUIOp, LLVM::IntToPtrOp>(
              user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto call = dyn_cast<CallOpInterface>(user);
      if (!call)
        continue;
      auto callee = dyn_cast_or_null<func::FuncOp>(call.resolveCallable());
      if (!callee || !isHostHelper(callee))
        return true;
    }
  }
  return false;
}

/// True if every use of `alloc` (through views) is host code that reads or
/// writes it, frees it, compares its address or hands it to a host helper:
/// the bookkeeping buffers of deallocation (pointers and ownership flags),
/// which stay in host memory. A buffer that a library op uses, or whose
/// address is handed to a call, is a device buffer even if no kernel touches
/// it (the output of one cuBLASLt product that only another product reads).
static bool isHostOnly(memref::AllocOp alloc) {
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!isOnHost(user))
        return false;
      if (isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp>(user))
        continue;
      if (auto pointer =
              dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        if (reachesLibraryCall(pointer.getResult()))
          return false;
        continue;
      }
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

namespace {
struct PlaceBuffersOnDevicePass
    : public ga::impl::PlaceBuffersOnDeviceBase<PlaceBuffersOnDevicePass> {
  void runOnOperation() override;
  LogicalResult placeBuffers(func::FuncOp fn);
  void nameKernels(func::FuncOp fn);
};
} // namespace

LogicalResult PlaceBuffersOnDevicePass::placeBuffers(func::FuncOp fn) {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 8> hostAllocs;
  fn.walk([&](Operation *op) {
    if (!isOnHost(op))
      return;
    if (auto alloc = dyn_cast<memref::AllocOp>(op); alloc && isHostOnly(alloc))
      hostAllocs.insert(op);
    else if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
                 memref::LoadOp, memref::StoreOp>(op))
      ops.push_back(op);
  });
  auto isHostAlloc = [&](Value memref) {
    Operation *def = getViewRoot(memref).getDefiningOp();
    return def && hostAllocs.contains(def);
  };
  for (Operation *op : ops) {
    OpBuilder b(op);
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto dev = gpu::AllocOp::create(
          b, op->getLoc(), alloc.getType(), /*asyncToken=*/Type(), ValueRange{},
          alloc.getDynamicSizes(), alloc.getSymbolOperands(),
          /*hostShared=*/false);
      alloc.replaceAllUsesWith(dev.getMemref());
      op->erase();
      ++numAllocs;
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
      ++numCopies;
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
  return success();
}

/// Kernel names, in program order: `@<func>_k<NN>_<what>[_acc]` in
/// `@<func>_kernels`.
void PlaceBuffersOnDevicePass::nameKernels(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  auto moduleName =
      FlatSymbolRefAttr::get(ctx, (fn.getSymName() + "_kernels").str());
  unsigned counter = 0;
  fn.walk<WalkOrder::PreOrder>([&](gpu::LaunchOp launch) {
    std::string what = "kernel";
    if (auto kind =
            launch->getAttrOfType<StringAttr>(GADialect::getKernelAttrName()))
      what = kind.str();
    bool accumulates = launch->hasAttr(GADialect::getAccumulatesAttrName());
    std::string name = llvm::formatv("{0}_k{1:2}_{2}{3}", fn.getSymName(),
                                     counter++, what, accumulates ? "_acc" : "")
                           .str();
    std::replace(name.begin(), name.end(), '.', '_');
    launch.setFunctionAttr(FlatSymbolRefAttr::get(ctx, name));
    launch.setModuleAttr(moduleName);
    ++numKernels;
    return WalkResult::skip();
  });
}

void PlaceBuffersOnDevicePass::runOnOperation() {
  for (func::FuncOp fn : getOperation().getOps<func::FuncOp>()) {
    if (fn.isExternal() || isHostHelper(fn))
      continue;
    if (failed(placeBuffers(fn)))
      return signalPassFailure();
    nameKernels(fn);
  }
  // ga.* attributes of ops mean nothing below this point (those of function
  // arguments are dropped by ga-prepare-functions-for-llvm).
  getOperation().walk([](Operation *op) {
    SmallVector<StringAttr> names;
    for (NamedAttribute a : op->getDiscardableAttrs())
      if (a.getName().strref().starts_with("ga."))
        names.push_back(a.getName());
    for (StringAttr n : names)
      op->removeDiscardableAttr(n);
  });
}
