//===- PromoteBuffersToGlobals.cpp - temporaries in static storage --------===//
//
// Moves the fixed-size temporaries of a function from the heap to private
// uninitialized memref.globals, so that repeated calls of a training step
// reuse the same mapped memory instead of getting fresh pages every time.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ga {
#define GEN_PASS_DEF_PROMOTEBUFFERSTOGLOBALS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether `op` only reads, writes or inspects a buffer operand, without
/// keeping a reference to it beyond its own execution.
static bool isBenignUse(Operation *op) {
  return isa<linalg::LinalgOp, memref::LoadOp, memref::StoreOp, memref::CopyOp,
             memref::DimOp, affine::AffineLoadOp, affine::AffineStoreOp,
             vector::TransferReadOp, vector::TransferWriteOp, vector::LoadOp,
             vector::StoreOp>(op);
}

/// Whether the buffer allocated by `alloc` stays inside its function and
/// inside the loop iteration that allocates it: every alias (views, loop
/// iter_args and results, scf.if results) is only read, written or
/// inspected. Collects the `memref.dealloc`s of the buffer in `deallocs`.
static bool staysLocal(memref::AllocOp alloc,
                       SmallVectorImpl<memref::DeallocOp> &deallocs) {
  llvm::SetVector<Value> aliases;
  aliases.insert(alloc.getResult());
  for (unsigned i = 0; i < aliases.size(); ++i) {
    for (OpOperand &use : aliases[i].getUses()) {
      Operation *user = use.getOwner();
      if (isBenignUse(user))
        continue;
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        deallocs.push_back(dealloc);
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != use.get())
          return false;
        for (Value result : user->getResults())
          aliases.insert(result);
        continue;
      }
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        aliases.insert(meta.getBaseBuffer());
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (use.getOperandNumber() < loop.getNumControlOperands())
          return false;
        OpOperand *init = &use;
        aliases.insert(loop.getTiedLoopRegionIterArg(init));
        aliases.insert(loop.getTiedLoopResult(init));
        continue;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        Operation *parent = yield->getParentOp();
        // A buffer allocated in a loop body and yielded lives on into the
        // next iteration, next to that iteration's own instance.
        if (!isa<scf::ForOp, scf::IfOp>(parent) ||
            parent->isProperAncestor(alloc))
          return false;
        aliases.insert(parent->getResult(use.getOperandNumber()));
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          aliases.insert(loop.getRegionIterArg(use.getOperandNumber()));
        continue;
      }
      // Returned, passed to a call, stored as a pointer, ...
      return false;
    }
  }
  return true;
}

/// Whether only one instance of `alloc`'s buffer can be live at a time in
/// one call of its function: no parallel region (or anything but plain
/// structured control flow) between it and the function.
static bool hasSingleInstance(memref::AllocOp alloc, func::FuncOp func) {
  for (Operation *parent = alloc->getParentOp(); parent != func;
       parent = parent->getParentOp())
    if (!isa<scf::ForOp, scf::IfOp, scf::ExecuteRegionOp>(parent))
      return false;
  return true;
}

/// Whether `func` can reach itself through `func.call`s in `module`.
static bool isRecursive(func::FuncOp func, SymbolTable &symbols) {
  llvm::DenseSet<Operation *> seen;
  SmallVector<func::FuncOp> worklist = {func};
  while (!worklist.empty()) {
    func::FuncOp current = worklist.pop_back_val();
    bool reached = false;
    current.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee)
        return;
      if (callee == func)
        reached = true;
      else if (seen.insert(callee).second)
        worklist.push_back(callee);
    });
    if (reached)
      return true;
  }
  return false;
}

struct PromoteBuffersToGlobalsPass
    : public ga::impl::PromoteBuffersToGlobalsBase<
          PromoteBuffersToGlobalsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      emitError(getOperation().getLoc())
          << "ga-promote-buffers-to-globals: alignment must be a power of "
             "two, got "
          << alignment.getValue();
      return signalPassFailure();
    }
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      SmallVector<memref::AllocOp> allocs;
      func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
      if (allocs.empty())
        continue;
      if (isRecursive(func, symbols)) {
        func.emitWarning()
            << "temporaries of recursive function @" << func.getSymName()
            << " stay on the heap: recursive calls would share static "
               "storage";
        continue;
      }
      unsigned counter = 0;
      for (memref::AllocOp alloc : allocs)
        promote(alloc, func, symbols, counter);
    }
  }

  void promote(memref::AllocOp alloc, func::FuncOp func, SymbolTable &symbols,
               unsigned &counter) {
    MemRefType type = alloc.getType();
    Type elem = type.getElementType();
    if (!type.hasStaticShape() || !alloc.getSymbolOperands().empty() ||
        !type.getLayout().isIdentity() || type.getMemorySpace() ||
        !(elem.isIntOrFloat() || elem.isIndex()))
      return;
    int64_t elemBits = elem.isIndex() ? 64 : elem.getIntOrFloatBitWidth();
    int64_t bytes = llvm::divideCeil(type.getNumElements() * elemBits, 8);
    SmallVector<memref::DeallocOp> deallocs;
    if (bytes < minBytes || !hasSingleInstance(alloc, func) ||
        !staysLocal(alloc, deallocs))
      return;

    OpBuilder builder(func);
    int64_t align = std::max<int64_t>(
        alignment, alloc.getAlignment() ? *alloc.getAlignment() : 1);
    auto global = memref::GlobalOp::create(
        builder, alloc.getLoc(),
        ("__ga_buffer_" + func.getSymName() + "_" + Twine(counter++)).str(),
        builder.getStringAttr("private"), type, builder.getUnitAttr(),
        /*constant=*/false, builder.getI64IntegerAttr(align));
    symbols.insert(global); // uniques the name
    builder.setInsertionPoint(alloc);
    auto get = memref::GetGlobalOp::create(builder, alloc.getLoc(), type,
                                           global.getSymName());
    for (memref::DeallocOp dealloc : deallocs)
      dealloc.erase();
    alloc.replaceAllUsesWith(get.getResult());
    alloc.erase();
    ++numPromoted;
    numBytes += bytes;
  }
};

} // namespace
