//===- ExpandAccumulate.cpp - ga.accumulate to linalg.generic -------------===//

#include "ga/IR/GAOps.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_EXPANDACCUMULATE
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct ExpandAccumulatePass
    : public ga::impl::ExpandAccumulateBase<ExpandAccumulatePass> {
  void runOnOperation() override {
    SmallVector<AccumulateOp> ops;
    getOperation()->walk([&](AccumulateOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AccumulateOp op : ops) {
      rewriter.setInsertionPoint(op);
      auto accType = op.getAcc().getType();
      int64_t rank = accType.getRank();
      AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
      SmallVector<utils::IteratorType> iterators(rank,
                                                 utils::IteratorType::parallel);
      vector::CombiningKind kind = op.getKind();
      Type accElt = accType.getElementType();
      auto generic = linalg::GenericOp::create(
          rewriter, op.getLoc(), TypeRange{accType},
          ValueRange{op.getPartial()}, ValueRange{op.getAcc()},
          ArrayRef<AffineMap>{identity, identity}, iterators,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value partial = args[0];
            if (partial.getType() != accElt)
              partial = arith::ExtFOp::create(b, loc, accElt, partial);
            Value combined =
                vector::makeArithReduction(b, loc, kind, args[1], partial);
            linalg::YieldOp::create(b, loc, combined);
          });
      rewriter.replaceOp(op, generic.getResults());
      ++numExpanded;
    }
  }
};
} // namespace
