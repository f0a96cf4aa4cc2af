//===- FoldIotaOperands.cpp - constant index tensors as loop indices ------===//
//
// A gather with constant indices (a strided slice, the backward of a write
// into a slice, or `x[:, [2]]`) reaches us from torch-mlir as a
// `linalg.generic` over integer tensors whose payload extracts from the
// source at their values: constants, or iotas (a generic yielding its own
// `linalg.index`, reshaped to the gather's rank). Where such an operand
// counts along the loops that index it, its payload argument becomes that
// count of `linalg.index` values: the batch analysis reads a gather at
// `linalg.index` of the batch loop as one at the sample's own position, and
// an index tensor it cannot relate to any sample.
//
//===----------------------------------------------------------------------===//

#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ga {
#define GEN_PASS_DEF_FOLDIOTAOPERANDS
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// Larger constants are left alone: reading them costs more than the fold
/// is worth, and torch-mlir's index constants are the size of an activation.
static constexpr int64_t kMaxElements = int64_t(1) << 24;

/// `offset + sum_j coefficients[j] * x_j` over the dimensions `x_j` of a
/// tensor.
struct AffineCount {
  int64_t offset = 0;
  SmallVector<int64_t> coefficients;
};

/// The values of an integer constant (dense, splat or a dense resource of
/// 32- or 64-bit integers), or failure.
static FailureOr<SmallVector<int64_t>> getIntegerValues(Attribute attr) {
  SmallVector<int64_t> values;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    values.reserve(dense.getNumElements());
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(v.getSExtValue());
    return values;
  }
  if (auto blob = dyn_cast<DenseI64ResourceElementsAttr>(attr)) {
    if (std::optional<ArrayRef<int64_t>> data = blob.tryGetAsArrayRef())
      return SmallVector<int64_t>(data->begin(), data->end());
    return failure();
  }
  if (auto blob = dyn_cast<DenseI32ResourceElementsAttr>(attr)) {
    if (std::optional<ArrayRef<int32_t>> data = blob.tryGetAsArrayRef())
      return SmallVector<int64_t>(data->begin(), data->end());
  }
  return failure();
}

/// The count that `values` (row-major over `shape`) are, if they are one with
/// a non-negative offset and coefficients: read off at the origin and one
/// step along each dimension, then checked at every element.
static std::optional<AffineCount> fitCount(ArrayRef<int64_t> values,
                                           ArrayRef<int64_t> shape) {
  if (values.empty())
    return std::nullopt;
  AffineCount count;
  count.offset = values.front();
  count.coefficients.assign(shape.size(), 0);
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (shape[d] > 1)
      count.coefficients[d] = values[stride] - count.offset;
    stride *= shape[d];
  }
  if (count.offset < 0 ||
      llvm::any_of(count.coefficients, [](int64_t c) { return c < 0; }))
    return std::nullopt;
  // Every element, with its multi-index advanced like an odometer.
  SmallVector<int64_t> position(shape.size(), 0);
  for (int64_t value : values) {
    int64_t expected = count.offset;
    for (auto [c, x] : llvm::zip(count.coefficients, position))
      expected += c * x;
    if (value != expected)
      return std::nullopt;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++position[d] < shape[d])
        break;
      position[d] = 0;
    }
  }
  return count;
}

/// The count of an iota: a generic without inputs, with parallel loops and
/// an identity map, whose payload yields `index_cast(linalg.index k)`.
static std::optional<AffineCount> getIotaCount(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 0 || op.getNumDpsInits() != 1 ||
      !op.getIndexingMapsArray()[0].isIdentity() ||
      op.getNumReductionLoops() != 0)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto cast = yield.getOperand(0).getDefiningOp<arith::IndexCastOp>();
  auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  if (!index)
    return std::nullopt;
  AffineCount count;
  count.coefficients.assign(op.getNumLoops(), 0);
  count.coefficients[index.getDim()] = 1;
  return count;
}

/// The count of `value`, an integer tensor with a static shape: a constant
/// that fits one, an iota, or an expand_shape of a count (each group of
/// result dimensions is the row-major split of its source dimension).
static std::optional<AffineCount> getCount(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isSignlessInteger() ||
      type.getNumElements() > kMaxElements)
    return std::nullopt;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
    FailureOr<SmallVector<int64_t>> values =
        getIntegerValues(constant.getValue());
    if (failed(values) || int64_t(values->size()) != type.getNumElements())
      return std::nullopt;
    return fitCount(*values, type.getShape());
  }
  if (auto generic = value.getDefiningOp<linalg::GenericOp>())
    return getIotaCount(generic);
  auto expand = value.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return std::nullopt;
  std::optional<AffineCount> source = getCount(expand.getSrc());
  if (!source)
    return std::nullopt;
  AffineCount count;
  count.offset = source->offset;
  count.coefficients.assign(type.getRank(), 0);
  for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
    int64_t stride = source->coefficients[d];
    for (int64_t r : llvm::reverse(group)) {
      count.coefficients[r] = type.getDimSize(r) > 1 ? stride : 0;
      stride *= type.getDimSize(r);
    }
  }
  return count;
}

/// Replaces the payload argument of `operand` (an input of `op` that is
/// `count` over its dimensions) by that count of the loop indices. Its
/// comparisons with zero (torch-mlir's wrap-around of negative indices) are
/// decided: the count is never negative.
static void replaceByLoopIndices(linalg::GenericOp op, OpOperand &operand,
                                 const AffineCount &count) {
  BlockArgument arg = op.getMatchingBlockArgument(&operand);
  AffineMap map = op.getMatchingIndexingMap(&operand);
  OpBuilder b = OpBuilder::atBlockBegin(op.getBody());
  Location loc = operand.get().getLoc();
  Value sum;
  auto add = [&](Value term) {
    sum = sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
  };
  if (count.offset != 0)
    add(arith::ConstantIndexOp::create(b, loc, count.offset));
  for (auto [dim, c] : llvm::enumerate(count.coefficients)) {
    // A dimension the map reads at 0 (a broadcast unit dimension) adds
    // nothing.
    if (c == 0 || isa<AffineConstantExpr>(map.getResult(dim)))
      continue;
    Value index = linalg::IndexOp::create(b, loc, map.getDimPosition(dim));
    if (c != 1)
      index = arith::MulIOp::create(b, loc, index,
                                    arith::ConstantIndexOp::create(b, loc, c));
    add(index);
  }
  if (!sum)
    sum = arith::ConstantIndexOp::create(b, loc, 0);
  Value value = arith::IndexCastOp::create(b, loc, arg.getType(), sum);
  for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
    auto cmp = dyn_cast<arith::CmpIOp>(use.getOwner());
    if (!cmp || use.getOperandNumber() != 0 ||
        !matchPattern(cmp.getRhs(), m_Zero()) ||
        (cmp.getPredicate() != arith::CmpIPredicate::slt &&
         cmp.getPredicate() != arith::CmpIPredicate::sge))
      continue;
    OpBuilder at(cmp);
    cmp.getResult().replaceAllUsesWith(arith::ConstantIntOp::create(
        at, cmp.getLoc(), cmp.getPredicate() == arith::CmpIPredicate::sge, 1));
    cmp.erase();
  }
  arg.replaceAllUsesWith(value);
}

namespace {
struct FoldIotaOperandsPass
    : public ga::impl::FoldIotaOperandsBase<FoldIotaOperandsPass> {
  using FoldIotaOperandsBase::FoldIotaOperandsBase;

  void runOnOperation() override;

  /// Folds every count operand once and cleans up the generics it folded
  /// into; whether any was folded.
  bool foldOnce();
};
} // namespace

bool FoldIotaOperandsPass::foldOnce() {
  SmallVector<linalg::GenericOp> folded;
  getOperation()->walk([&](linalg::GenericOp op) {
    bool any = false;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(operand);
      if (arg.use_empty() ||
          !op.getMatchingIndexingMap(operand).isProjectedPermutation(
              /*allowZeroInResults=*/true))
        continue;
      std::optional<AffineCount> count = getCount(operand->get());
      if (!count)
        continue;
      replaceByLoopIndices(op, *operand, *count);
      ++numFolded;
      any = true;
    }
    if (any)
      folded.push_back(op);
  });
  if (folded.empty())
    return false;
  // The operands are no longer read: upstream's pattern drops them.
  // The wrap-around selects decided above fold away, and with them the casts
  // between index and the constant's type, so that a payload reads at
  // `linalg.index` itself where the count is one loop index.
  MLIRContext *ctx = &getContext();
  RewritePatternSet patterns(ctx);
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  arith::SelectOp::getCanonicalizationPatterns(patterns, ctx);
  arith::IndexCastOp::getCanonicalizationPatterns(patterns, ctx);
  SmallVector<Operation *> ops;
  for (linalg::GenericOp op : folded) {
    ops.push_back(op);
    op.getBody()->walk([&](Operation *nested) { ops.push_back(nested); });
  }
  (void)applyOpPatternsGreedily(ops, std::move(patterns));
  return true;
}

void FoldIotaOperandsPass::runOnOperation() {
  // To a fixpoint: a generic whose only input was a count becomes an iota
  // itself once the cleanup drops that input (GPT-J's positions, counted,
  // then broadcast into a gather), and its own consumers fold in the next
  // round. One round would leave them to whatever runs the pass again, so
  // the step a pipeline builds would depend on how often it ran the pass
  // (the budget planner runs it before the rewrite that runs it again).
  // Each round removes at least one operand, so the loop ends.
  while (foldOnce()) {
  }
}
