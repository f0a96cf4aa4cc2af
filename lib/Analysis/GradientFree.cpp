//===- GradientFree.cpp - values no gradient flows through ----------------===//
//
// A statistic reduced over the batch that depends on the parameters only
// through integer values (top-k indices, comparisons, counts) is piecewise
// constant in the parameters: no gradient flows through it. Computing it in a
// forward-only statistics loop before the main loop is then exact and cheap
// (one more pass over the part of the forward that feeds it), so the
// analysis does it without being asked, as it does for data-only statistics.
// The load-balancing loss of mixture-of-experts routers is the case in point:
// its token fractions f_i (counts of top-k indices) multiply the mean router
// probabilities P_i, and the backward of that product reads f in every
// micro-batch.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/GradientFree.h"
#include "ga/IR/GADialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::ga;

/// Whether values of `type` can carry a gradient: floating-point (or complex)
/// scalars and tensors. Integers, indices and booleans cannot.
static bool carriesGradient(Type type) {
  Type element = getElementTypeOrSelf(type);
  return isa<FloatType, ComplexType>(element);
}

bool mlir::ga::isGradientFree(Value value) {
  SmallVector<Value> worklist{value};
  DenseSet<Value> visited;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!visited.insert(current).second || !carriesGradient(current.getType()))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(current)) {
      // Only the per-sample arguments of the step itself are known to be
      // data; a parameter, or a block argument of a nested region (a loop's
      // carried value), may carry a gradient.
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func || !arg.getOwner()->isEntryBlock() ||
          !func.getArgAttr(arg.getArgNumber(), GADialect::getBatchAttrName()))
        return false;
      continue;
    }
    for (Value input : getOpInputs(current.getDefiningOp()))
      worklist.push_back(input);
  }
  return true;
}

bool mlir::ga::isHoistedStatistic(Value value, const BatchClass &cls,
                                  const BatchDependence::Options &options) {
  return !cls.dependsOnParams || options.recomputeStatistics ||
         isGradientFree(value);
}
