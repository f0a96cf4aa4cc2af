//===- FuseAccumulation.cpp - accumulate inside the producer --------------===//

#include "ga/IR/GAOps.h"
#include "ga/Transforms/Passes.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_FUSEACCUMULATION
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The combiner of `result` in `op`, if it has kind `kind`: then the
/// output's init can be replaced by any accumulator of that kind.
static Operation *getFusableCombiner(linalg::LinalgOp op, OpResult result,
                                     vector::CombiningKind kind) {
  std::optional<vector::CombiningKind> actual =
      getCombinerKind(op, result.getResultNumber());
  if (!actual || *actual != kind)
    return nullptr;
  return matchCombiner(op, result.getResultNumber());
}

struct FuseAccumulationPass
    : public ga::impl::FuseAccumulationBase<FuseAccumulationPass> {
  using FuseAccumulationBase::FuseAccumulationBase;

  void runOnOperation() override {
    SmallVector<AccumulateOp> ops;
    getOperation()->walk([&](AccumulateOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    bool failedRequirement = false;
    for (AccumulateOp op : ops) {
      std::string reason;
      if (succeeded(fuse(rewriter, op, reason))) {
        ++numFused;
        continue;
      }
      ++numNotFused;
      if (requireFusion) {
        op.emitError() << "accumulation cannot be fused into its producer: "
                       << reason;
        failedRequirement = true;
      }
    }
    if (failedRequirement)
      signalPassFailure();
  }

  LogicalResult fuse(RewriterBase &rewriter, AccumulateOp op,
                     std::string &reason) {
    auto fail = [&](StringRef why) {
      reason = why.str();
      return failure();
    };
    auto partial = dyn_cast<OpResult>(op.getPartial());
    if (!partial)
      return fail("the partial result is not produced by an op");
    if (!partial.hasOneUse())
      return fail("the partial result has other uses");
    auto producer = dyn_cast<linalg::LinalgOp>(partial.getOwner());
    if (!producer || !producer.hasPureTensorSemantics())
      return fail("the partial result is not produced by a linalg op on "
                  "tensors");
    unsigned index = partial.getResultNumber();
    OpOperand *init = producer.getDpsInitOperand(index);
    if (!isNeutralTensor(init->get(), op.getKind()))
      return fail("the producer does not start from the neutral element of "
                  "the accumulation");
    if (!getFusableCombiner(producer, partial, op.getKind()))
      return fail("the producer's result is not combined with its init by "
                  "the accumulation's kind");

    // Same element type: the accumulator simply becomes the init.
    if (op.getAcc().getType() == partial.getType()) {
      rewriter.modifyOpInPlace(producer, [&] { init->set(op.getAcc()); });
      rewriter.replaceOp(op, partial);
      return success();
    }

    // A wider accumulator: compute the producer's combine in the wide type.
    rewriter.setInsertionPoint(producer);
    auto generic = dyn_cast<linalg::GenericOp>(producer.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, producer);
      if (failed(generalized))
        return fail("the producer cannot be generalized to compute in the "
                    "accumulator's type");
      generic = *generalized;
    }
    Type wideType = op.getAcc().getType().getElementType();
    OpResult genericResult = generic->getResult(index);
    Operation *combiner =
        getFusableCombiner(cast<linalg::LinalgOp>(generic.getOperation()),
                           genericResult, op.getKind());
    if (!combiner)
      return fail("the generalized producer has no single combiner");
    OpOperand *genericInit = generic.getDpsInitOperand(index);
    BlockArgument outArg = generic.getMatchingBlockArgument(genericInit);
    Value other = combiner->getOperand(0) == outArg ? combiner->getOperand(1)
                                                    : combiner->getOperand(0);
    rewriter.modifyOpInPlace(generic, [&] {
      genericInit->set(op.getAcc());
      genericResult.setType(op.getAcc().getType());
      outArg.setType(wideType);
    });
    rewriter.setInsertionPoint(combiner);
    Value wideOther =
        arith::ExtFOp::create(rewriter, combiner->getLoc(), wideType, other);
    Value combined = vector::makeArithReduction(
        rewriter, combiner->getLoc(), op.getKind(), outArg, wideOther);
    rewriter.replaceOp(combiner, combined);
    rewriter.replaceOp(op, genericResult);
    return success();
  }
};
} // namespace
