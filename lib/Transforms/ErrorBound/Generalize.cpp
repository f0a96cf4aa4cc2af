//===- Generalize.cpp - every computation a linalg.generic ---------------===//
//
// The error analyses (`--ga-forward-error-bound`, `--ga-perturb-roundings`)
// state one rule per scalar op of a payload; this puts every computation of a
// function into payloads first.
//
//===----------------------------------------------------------------------===//

#include "ErrorBound.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

LogicalResult mlir::ga::error_bound::generalizeComputations(func::FuncOp func) {
  // Aggregate ops (linalg.softmax) become the structured ops they are
  // defined by.
  IRRewriter rewriter(func.getContext());
  SmallVector<linalg::AggregatedOpInterface> aggregates;
  func.walk(
      [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
  for (linalg::AggregatedOpInterface op : aggregates) {
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
    if (failed(parts))
      return op->emitError("could not decompose this op");
    rewriter.replaceOp(op, *parts);
  }
  RewritePatternSet patterns(func.getContext());
  linalg::populateLinalgNamedOpsGeneralizationPatterns(patterns);
  linalg::populateElementwiseToLinalgConversionPatterns(patterns);
  GreedyRewriteConfig config;
  config.enableFolding(false);
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
    return func.emitError("the linalg ops of @")
           << func.getSymName() << " did not converge to linalg.generic";
  return success();
}

/// A copy of `func` named `name` after it, see forEachAnalysisCopy.
static FailureOr<func::FuncOp>
cloneForAnalysis(func::FuncOp func, StringRef name, SymbolTable &symbols) {
  if (func.isDeclaration())
    return func.emitError("@") << func.getSymName() << " has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError("@")
           << func.getSymName()
           << " has several blocks; only structured control flow is followed";
  if (symbols.lookup(name))
    return func.emitError("a symbol named '") << name << "' exists already";
  func::FuncOp copy = func.clone();
  copy.setSymName(name);
  for (unsigned i = 0, e = copy.getNumArguments(); i < e; ++i) {
    SmallVector<NamedAttribute> kept;
    if (DictionaryAttr attrs = copy.getArgAttrDict(i))
      for (NamedAttribute attr : attrs)
        if (!attr.getName().strref().starts_with("ga."))
          kept.push_back(attr);
    copy.setArgAttrs(i, kept);
  }
  symbols.insert(copy, std::next(Block::iterator(func)));
  if (failed(mlir::ga::error_bound::generalizeComputations(copy)))
    return failure();
  return copy;
}

LogicalResult mlir::ga::error_bound::forEachAnalysisCopy(
    ModuleOp module, ArrayRef<std::string> names, StringRef suffix,
    llvm::function_ref<LogicalResult(func::FuncOp)> build) {
  for (StringRef name : names)
    if (!module.lookupSymbol<func::FuncOp>(name))
      return module.emitError() << "no function named '" << name << "'";
  SmallVector<func::FuncOp> targets;
  for (auto func : module.getOps<func::FuncOp>())
    if (names.empty() ? func.isPublic() && !func.isDeclaration()
                      : llvm::is_contained(names, func.getSymName()))
      targets.push_back(func);
  SymbolTable symbols(module);
  for (func::FuncOp func : targets) {
    FailureOr<func::FuncOp> copy =
        cloneForAnalysis(func, (func.getSymName() + suffix).str(), symbols);
    if (failed(copy) || failed(build(*copy)))
      return failure();
  }
  return success();
}
