//===- MarkBatchArgs.cpp - add ga.batch from the command line -------------===//

#include "ga/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ga {
#define GEN_PASS_DEF_MARKBATCHARGS
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct MarkBatchArgsPass
    : public ga::impl::MarkBatchArgsBase<MarkBatchArgsPass> {
  using MarkBatchArgsBase::MarkBatchArgsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Parse `index[:dim]` entries once, before touching the IR.
    SmallVector<std::pair<unsigned, int64_t>> entries;
    for (StringRef entry : batchArgs) {
      auto [indexText, dimText] = entry.split(':');
      unsigned index;
      int64_t dim = 0;
      if (indexText.trim().getAsInteger(10, index) ||
          (!dimText.empty() && dimText.trim().getAsInteger(10, dim))) {
        module.emitError() << "ga-mark-batch-args: malformed batch-args entry '"
                           << entry << "'; expected 'index' or 'index:dim'";
        return signalPassFailure();
      }
      entries.push_back({index, dim});
    }
    if (entries.empty())
      return;

    bool marked = false;
    OpBuilder builder(module.getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      bool selected = funcNames.empty()
                          ? func.isPublic()
                          : llvm::is_contained(funcNames, func.getSymName());
      if (!selected)
        continue;
      for (auto [index, dim] : entries) {
        if (index >= func.getNumArguments()) {
          func.emitError() << "ga-mark-batch-args: argument index " << index
                           << " is out of range (the function has "
                           << func.getNumArguments() << " arguments)";
          return signalPassFailure();
        }
        func.setArgAttr(index, GADialect::getBatchAttrName(),
                        builder.getI64IntegerAttr(dim));
      }
      marked = true;
    }
    for (StringRef name : funcNames) {
      if (!module.lookupSymbol<func::FuncOp>(name)) {
        module.emitError() << "ga-mark-batch-args: no function named '" << name
                           << "'";
        return signalPassFailure();
      }
    }
    if (!marked) {
      module.emitError("ga-mark-batch-args: no function was selected");
      return signalPassFailure();
    }
    // The dialect verifies the attribute values (rank, range) in one place.
    for (auto func : module.getOps<func::FuncOp>())
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (auto attr = func.getArgAttr(i, GADialect::getBatchAttrName()))
          if (failed(getContext()
                         .getLoadedDialect<GADialect>()
                         ->verifyRegionArgAttribute(
                             func, 0, i,
                             NamedAttribute(builder.getStringAttr(
                                                GADialect::getBatchAttrName()),
                                            attr))))
            return signalPassFailure();
  }
};
} // namespace
