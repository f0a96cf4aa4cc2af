//===- ForwardErrorBound.cpp - a step with bounds of its rounding ---------===//
//
// Adds `@f_error_bound` beside each selected `@f`: the same computation,
// which also returns a bound of every float result's rounding error and a
// flag on every integer result that may differ between evaluations. The
// per-op rules live in ErrorBound/; this file selects the functions,
// generalizes them so that every computation is a `linalg.generic`, and
// extends the return.
//
//===----------------------------------------------------------------------===//

#include "ga/Transforms/Passes.h"

#include "ErrorBound/ErrorBound.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::ga {
#define GEN_PASS_DEF_FORWARDERRORBOUND
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::error_bound;

namespace {
struct ForwardErrorBoundPass
    : public ga::impl::ForwardErrorBoundBase<ForwardErrorBoundPass> {
  using ForwardErrorBoundBase::ForwardErrorBoundBase;

  void runOnOperation() override {
    if (failed(forEachAnalysisCopy(
            getOperation(), funcNames, suffix,
            [&](func::FuncOp bound) { return addBounds(bound); })))
      signalPassFailure();
  }

  /// Builds the bounds of `bound`, a copy of the function, and returns them
  /// after its results.
  LogicalResult addBounds(func::FuncOp bound) {
    BoundBuilder builder;
    if (failed(builder.processBlock(bound.getBody().front())))
      return failure();
    Operation *ret = bound.getBody().front().getTerminator();
    OpBuilder b(ret);
    SmallVector<Value> values(ret->getOperands());
    for (Value v : ret->getOperands()) {
      if (!getCompanionType(v.getType()))
        return ret->emitError("no bound for a result of type ") << v.getType();
      values.push_back(builder.getOrZero(b, ret->getLoc(), v));
    }
    ret->setOperands(values);
    bound.setFunctionType(b.getFunctionType(bound.getArgumentTypes(),
                                            ValueRange(values).getTypes()));
    bound.removeResAttrsAttr();
    numBounded += builder.numBounded;
    return success();
  }
};
} // namespace
