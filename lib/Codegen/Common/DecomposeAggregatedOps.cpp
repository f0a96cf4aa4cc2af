//===- DecomposeAggregatedOps.cpp - softmax into linalg ops ---------------===//
//
// --ga-decompose-aggregated-ops: replaces every op implementing
// linalg::AggregatedOpInterface (linalg.softmax) by its upstream
// decomposition, on tensors, so that the lowerings see only ops they lower.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/IR/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_DECOMPOSEAGGREGATEDOPS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct DecomposeAggregatedOpsPass
    : public ga::impl::DecomposeAggregatedOpsBase<DecomposeAggregatedOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      // The decompositions build tensor ops: on buffers there is nothing to
      // replace the op's (absent) results with. An op that is not in
      // destination style (ga.attention) has tensor results only.
      auto dps = dyn_cast<DestinationStyleOpInterface>(op.getOperation());
      bool onBuffers =
          dps ? !dps.hasPureTensorSemantics()
              : llvm::any_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>);
      if (onBuffers) {
        op->emitOpError("cannot be decomposed on buffers: decompose it "
                        "before bufferization");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> values = op.decomposeOperation(rewriter);
      if (failed(values)) {
        op->emitOpError("has no decomposition into ops the lowerings handle")
            << DiagnosticCode::NotLowered;
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *values);
      ++numDecomposed;
    }
  }
};

} // namespace
