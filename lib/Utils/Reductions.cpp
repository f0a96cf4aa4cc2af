//===- Reductions.cpp - matching reductions in linalg ops -----------------===//

#include "ga/Utils/Reductions.h"

#include "ga/IR/GAOps.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::ga;

Operation *mlir::ga::matchCombiner(linalg::LinalgOp op, unsigned resultIndex) {
  OpOperand *init = op.getDpsInitOperand(resultIndex);
  BlockArgument outArg = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Operation *combiner = yield.getOperand(resultIndex).getDefiningOp();
  if (!combiner || combiner->getBlock() != op.getBlock() ||
      combiner->getNumOperands() != 2 || !outArg.hasOneUse() ||
      *outArg.getUsers().begin() != combiner || !combiner->hasOneUse())
    return nullptr;
  if (!linalg::getCombinerOpKind(combiner))
    return nullptr;
  return combiner;
}

std::optional<vector::CombiningKind>
mlir::ga::getCombinerKind(linalg::LinalgOp op, unsigned resultIndex) {
  if (Operation *combiner = matchCombiner(op, resultIndex))
    return linalg::getCombinerOpKind(combiner);
  return std::nullopt;
}

bool mlir::ga::isFillLike(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op))
    return true;
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      op.hasIndexSemantics())
    return false;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<ShapedType>(in->get().getType()))
      return false;
  return !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

bool mlir::ga::isNeutralTensor(Value value, vector::CombiningKind kind) {
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
