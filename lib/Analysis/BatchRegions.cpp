//===- BatchRegions.cpp - the batch analysis of scf regions ---------------===//
//
// Transfer functions of scf.if and scf.for with per-sample values in their
// regions: the regions are analysed like the function body, the iteration
// arguments of loops to a fixpoint.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ga;

/// The class of a value yielded for a per-sample result: batched values
/// agree on their layout; other values (a zero tensor in one branch) are
/// re-created at micro-batch size by the rewrite.
static std::optional<BatchClass> joinYields(ArrayRef<BatchClass> yields) {
  std::optional<BatchClass> batched;
  for (const BatchClass &cls : yields) {
    if (!cls.isBatched())
      continue;
    if (batched && (batched->dim != cls.dim || batched->factor != cls.factor))
      return std::nullopt;
    if (!batched)
      batched = cls;
    batched->level = std::max(batched->level, cls.level);
    batched->dependsOnParams |= cls.dependsOnParams;
  }
  return batched;
}

void BatchDependence::visitStructured(Operation *op) {
  // Control values (a condition, loop bounds) come from outside the regions
  // and must not depend on a statistic of this micro-batch.
  unsigned level = checkCoupling(op, SmallVector<Value>(op->getOperands()));
  auto visitBlock = [&](Block &block) {
    for (Operation &nested : block.without_terminator()) {
      visit(&nested);
      if (isBatchReduction(&nested)) {
        error(&nested) << "reduction over the batch inside '" << op->getName()
                       << "' is not supported: reduce after the region";
        return false;
      }
    }
    return true;
  };
  auto finish = [&](ArrayRef<SmallVector<BatchClass>> yieldsPerResult) {
    for (auto [result, yields] : llvm::zip(op->getResults(), yieldsPerResult)) {
      std::optional<BatchClass> batched = joinYields(yields);
      if (!batched) {
        bool anyIn = llvm::any_of(
            yields, [](const BatchClass &c) { return c.isBatched(); });
        if (anyIn) {
          error(op) << "result #" << cast<OpResult>(result).getResultNumber()
                    << " is per-sample along different dimensions in "
                       "different places";
          return;
        }
        BatchClass joined;
        for (const BatchClass &cls : yields) {
          joined.dependsOnParams |= cls.dependsOnParams;
          joined.level = std::max(joined.level, cls.level);
          if (cls.isPostReduction())
            joined.kind = BatchClass::Kind::Derived;
        }
        classes[result] = joined;
        continue;
      }
      batched->level = std::max(batched->level, level);
      if (!isa<RankedTensorType>(result.getType())) {
        error(op) << "per-sample result #"
                  << cast<OpResult>(result).getResultNumber()
                  << " must be a ranked tensor";
        return;
      }
      classes[result] = *batched;
    }
    opInfo[op] = PerSampleOpInfo();
  };

  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (!visitBlock(ifOp.getThenRegion().front()) ||
        (!ifOp.getElseRegion().empty() &&
         !visitBlock(ifOp.getElseRegion().front())))
      return;
    SmallVector<SmallVector<BatchClass>> yields(op->getNumResults());
    for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
      if (region->empty())
        continue;
      for (auto [index, value] :
           llvm::enumerate(region->front().getTerminator()->getOperands()))
        yields[index].push_back(getClass(value));
    }
    return finish(yields);
  }

  // scf.for: iterate until the classes of the iteration arguments are stable
  // (an argument that starts uniform may become per-sample, and a chain of
  // arguments takes one iteration per link). Each argument can only go from
  // not per-sample to per-sample, so this terminates after at most one
  // iteration per argument. Only the last iteration's findings count.
  auto forOp = cast<scf::ForOp>(op);
  Block &body = *forOp.getBody();
  for (auto [arg, init] :
       llvm::zip(forOp.getRegionIterArgs(), forOp.getInitArgs()))
    classes[arg] = getClass(init);
  classes[forOp.getInductionVar()] = BatchClass();
  size_t numDiagnostics = diagnostics.size();
  bool failedBefore = failed;
  while (true) {
    diagnostics.truncate(numDiagnostics);
    failed = failedBefore;
    for (Operation &nested : body.without_terminator())
      nested.walk([&](Operation *inner) { opInfo.erase(inner); });
    if (!visitBlock(body))
      return;
    bool changed = false;
    auto yield = cast<scf::YieldOp>(body.getTerminator());
    for (auto [arg, value] :
         llvm::zip(forOp.getRegionIterArgs(), yield.getOperands())) {
      BatchClass argClass = getClass(arg), yielded = getClass(value);
      if (!yielded.isBatched())
        continue;
      // The argument holds the initial value on the first iteration.
      yielded.dependsOnParams |= argClass.dependsOnParams;
      if (!argClass.isBatched() ||
          yielded.dependsOnParams != argClass.dependsOnParams) {
        classes[arg] = yielded;
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  SmallVector<SmallVector<BatchClass>> yields;
  for (auto [arg, value] :
       llvm::zip(forOp.getRegionIterArgs(), yield.getOperands()))
    yields.push_back({getClass(arg), getClass(value)});
  finish(yields);
}
