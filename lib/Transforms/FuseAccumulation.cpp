//===- FuseAccumulation.cpp - accumulate inside the producer --------------===//

#include "ga/IR/GAOps.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_FUSEACCUMULATION
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether `value` is a tensor filled with the neutral element of `kind`.
static bool isNeutralTensor(Value value, vector::CombiningKind kind) {
  Attribute element;
  if (auto fill = value.getDefiningOp<linalg::FillOp>()) {
    if (!matchPattern(fill.getInputs()[0], m_Constant(&element)))
      return false;
  } else {
    DenseElementsAttr dense;
    if (!matchPattern(value, m_Constant(&dense)) || !dense.isSplat())
      return false;
    element = dense.getSplatValue<Attribute>();
  }
  return isNeutralElement(kind, element);
}

/// The op combining the output block argument of `result` with the value
/// yielded for it, if it has kind `kind` and nothing else reads the argument
/// or the combined value: then the output's init can be replaced by any
/// accumulator of that kind.
static Operation *getFusableCombiner(linalg::LinalgOp op, OpResult result,
                                     vector::CombiningKind kind) {
  OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
  BlockArgument outArg = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Operation *combiner =
      yield.getOperand(result.getResultNumber()).getDefiningOp();
  if (!combiner || combiner->getBlock() != op.getBlock() ||
      combiner->getNumOperands() != 2 || !outArg.hasOneUse() ||
      *outArg.getUsers().begin() != combiner || !combiner->hasOneUse())
    return nullptr;
  std::optional<vector::CombiningKind> combinerKind =
      linalg::getCombinerOpKind(combiner);
  if (!combinerKind || *combinerKind != kind)
    return nullptr;
  return combiner;
}

struct FuseAccumulationPass
    : public ga::impl::FuseAccumulationBase<FuseAccumulationPass> {
  void runOnOperation() override {
    SmallVector<AccumulateOp> ops;
    getOperation()->walk([&](AccumulateOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AccumulateOp op : ops) {
      if (succeeded(fuse(rewriter, op)))
        ++numFused;
      else
        ++numNotFused;
    }
  }

  LogicalResult fuse(RewriterBase &rewriter, AccumulateOp op) {
    auto partial = dyn_cast<OpResult>(op.getPartial());
    if (!partial || !partial.hasOneUse())
      return failure();
    auto producer = dyn_cast<linalg::LinalgOp>(partial.getOwner());
    if (!producer || !producer.hasPureTensorSemantics())
      return failure();
    unsigned index = partial.getResultNumber();
    OpOperand *init = producer.getDpsInitOperand(index);
    if (!isNeutralTensor(init->get(), op.getKind()) ||
        !getFusableCombiner(producer, partial, op.getKind()))
      return failure();

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
        return failure();
      generic = *generalized;
    }
    Type wideType = op.getAcc().getType().getElementType();
    OpResult genericResult = generic->getResult(index);
    Operation *combiner = getFusableCombiner(
        cast<linalg::LinalgOp>(generic.getOperation()), genericResult,
        op.getKind());
    if (!combiner)
      return failure();
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
