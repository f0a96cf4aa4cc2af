//===- PipelineUtils.cpp - helper passes shared by the lowerings ----------===//

#include "PipelineUtils.h"

#include "ga/Analysis/Reductions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

namespace {

//===----------------------------------------------------------------------===//
// PrepareFunctionsForLLVMPass
//===----------------------------------------------------------------------===//

/// See createPrepareFunctionsForLLVMPass.
struct PrepareFunctionsForLLVMPass
    : public PassWrapper<PrepareFunctionsForLLVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareFunctionsForLLVMPass)

  explicit PrepareFunctionsForLLVMPass(bool cInterface)
      : cInterface(cInterface) {}

  StringRef getArgument() const final {
    return "ga-prepare-functions-for-llvm";
  }
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
        if (DictionaryAttr attrs = fn.getArgAttrDict(i))
          for (NamedAttribute attr : attrs)
            if (attr.getName().strref().starts_with("ga."))
              dropped.push_back(attr.getName());
        for (StringAttr name : dropped)
          fn.removeArgAttr(i, name);
      }
    }
  }

  bool cInterface;
};

//===----------------------------------------------------------------------===//
// DuplicateSharedFillsPass
//===----------------------------------------------------------------------===//

/// See createDuplicateSharedFillsPass.
struct DuplicateSharedFillsPass
    : public PassWrapper<DuplicateSharedFillsPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DuplicateSharedFillsPass)

  DuplicateSharedFillsPass(FillKind kind, FillPlacement placement)
      : kind(kind), placement(placement) {}

  StringRef getArgument() const final { return "ga-duplicate-shared-fills"; }
  StringRef getDescription() const final {
    return "Give every use of a linalg.fill on tensors its own fill";
  }

  bool isFill(linalg::LinalgOp op) const {
    if (!op.hasPureTensorSemantics())
      return false;
    if (kind == FillKind::Named)
      return isa<linalg::FillOp>(op);
    return isFillLike(op);
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> fills;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isFill(op) && !op->getResult(0).use_empty())
        fills.push_back(op);
    });
    bool keepFirst = placement == FillPlacement::KeepFirstCopyAtUser;
    for (linalg::LinalgOp fill : fills) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      OpBuilder builder(fill);
      for (OpOperand *use : llvm::drop_begin(uses, keepFirst ? 1 : 0)) {
        Operation *user = use->getOwner();
        // Not into a linalg body: there only scalar ops belong.
        Operation *parent = user->getParentOp();
        if (isa<linalg::LinalgOp>(parent))
          user = fill->getBlock()->findAncestorOpInBlock(*parent);
        builder.setInsertionPoint(user ? user : fill.getOperation());
        Operation *copy = builder.clone(*fill);
        use->set(copy->getResult(0));
      }
      if (!keepFirst)
        fill->erase();
    }
  }

  FillKind kind;
  FillPlacement placement;
};

/// See createVerifyLoweredPass.
struct VerifyLoweredPass
    : public PassWrapper<VerifyLoweredPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyLoweredPass)

  VerifyLoweredPass(StringRef argument, StringRef byWhat,
                    std::function<bool(Operation *)> allowed)
      : argument(argument.str()), byWhat(byWhat.str()),
        allowed(std::move(allowed)) {}

  StringRef getArgument() const final { return argument; }
  StringRef getDescription() const final {
    return "Check that only the ops a pipeline may leave are left";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module.walk([&](Operation *op) {
      if (op == module.getOperation() || allowed(op))
        return WalkResult::advance();
      op->emitError() << "'" << op->getName() << "' was not lowered " << byWhat;
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  std::string argument, byWhat;
  std::function<bool(Operation *)> allowed;
};

} // namespace

//===----------------------------------------------------------------------===//
// Pass constructors
//===----------------------------------------------------------------------===//

std::unique_ptr<Pass>
mlir::ga::detail::createPrepareFunctionsForLLVMPass(bool cInterface) {
  return std::make_unique<PrepareFunctionsForLLVMPass>(cInterface);
}

std::unique_ptr<Pass>
mlir::ga::detail::createDuplicateSharedFillsPass(FillKind kind,
                                                 FillPlacement placement) {
  return std::make_unique<DuplicateSharedFillsPass>(kind, placement);
}

std::unique_ptr<Pass> mlir::ga::detail::createVerifyLoweredPass(
    StringRef argument, StringRef byWhat,
    std::function<bool(Operation *)> allowed) {
  return std::make_unique<VerifyLoweredPass>(argument, byWhat,
                                             std::move(allowed));
}
