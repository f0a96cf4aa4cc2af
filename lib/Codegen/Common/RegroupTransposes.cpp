//===- RegroupTransposes.cpp - transposes through reshapes ----------------===//
//
// --ga-regroup-transposes: on tensors, a transpose that moves only unit
// dimensions becomes reshapes of its source, and a collapse of a transpose a
// transpose of a collapse of its source, when the collapse's groups are runs
// of the source's dimensions. Bufferized, reshapes are views: the copy goes,
// or becomes a transpose that --ga-isolate-library-products absorbs into the
// product that reads it.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/Utils/Gemm.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_REGROUPTRANSPOSES
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// A transpose followed by a collapse, as a collapse of the transpose's
/// source (`sourceGroups`, one group per kept dimension), a transpose of
/// those dimensions (`permutation`, linalg.transpose's: result dimension i
/// is collapsed dimension permutation[i]) and an expansion of its result
/// into the collapse's result (`resultGroups`).
struct Regrouping {
  SmallVector<ReassociationIndices> sourceGroups;
  SmallVector<int64_t> permutation;
  SmallVector<ReassociationIndices> resultGroups;

  bool movesData() const {
    return !llvm::equal(permutation, llvm::seq<int64_t>(permutation.size()));
  }
};

/// Attaches each index of `unit` (sorted) to the group of the next index
/// not in it, or of the last one when none follows: `owner[i]` is the group
/// of index i for the others (-1 for the unit ones). Returns the groups.
static SmallVector<ReassociationIndices> attachUnits(ArrayRef<int64_t> owner,
                                                     unsigned numGroups) {
  SmallVector<ReassociationIndices> groups(numGroups);
  SmallVector<int64_t> pending;
  for (auto [index, group] : llvm::enumerate(owner)) {
    if (group < 0) {
      pending.push_back(index);
      continue;
    }
    groups[group].append(pending.begin(), pending.end());
    pending.clear();
    groups[group].push_back(index);
  }
  groups.back().append(pending.begin(), pending.end());
  return groups;
}

/// The regrouping of a transpose whose result dimension i is source
/// dimension `sourceDim[i]` (source of shape `sourceShape`), followed by a
/// collapse with groups `groups` of its result dimensions; none unless the
/// non-unit source dimensions of every group are consecutive among the
/// source's non-unit dimensions, in order, and there is at least one.
static std::optional<Regrouping>
regroup(ArrayRef<int64_t> sourceDim, ArrayRef<int64_t> sourceShape,
        ArrayRef<ReassociationIndices> groups) {
  // The rank of each non-unit source dimension among them (-1: unit).
  SmallVector<int64_t> rank(sourceShape.size(), -1);
  int64_t numNonUnit = 0;
  for (auto [dim, size] : llvm::enumerate(sourceShape))
    if (size != 1)
      rank[dim] = numNonUnit++;
  // For each group of the collapse, the rank of its first non-unit source
  // dimension (-1: a group of unit dimensions only).
  SmallVector<int64_t> firstRank;
  for (const ReassociationIndices &group : groups) {
    int64_t first = -1, last = -1;
    for (int64_t resultDim : group) {
      int64_t r = rank[sourceDim[resultDim]];
      if (r < 0)
        continue;
      if (last >= 0 && r != last + 1)
        return std::nullopt;
      if (first < 0)
        first = r;
      last = r;
    }
    firstRank.push_back(first);
  }
  // The kept groups in source order, then each kept group's position there.
  SmallVector<int64_t> kept;
  for (auto [index, first] : llvm::enumerate(firstRank))
    if (first >= 0)
      kept.push_back(index);
  if (kept.empty())
    return std::nullopt;
  SmallVector<int64_t> bySource(kept);
  llvm::sort(bySource,
             [&](int64_t a, int64_t b) { return firstRank[a] < firstRank[b]; });
  SmallVector<int64_t> sourcePosition(groups.size(), -1);
  for (auto [position, group] : llvm::enumerate(bySource))
    sourcePosition[group] = position;

  Regrouping result;
  // Source dimensions: each non-unit one in its group's source position.
  SmallVector<int64_t> sourceOwner(sourceShape.size(), -1);
  for (auto [index, group] : llvm::enumerate(groups))
    for (int64_t resultDim : group)
      if (rank[sourceDim[resultDim]] >= 0)
        sourceOwner[sourceDim[resultDim]] = sourcePosition[index];
  result.sourceGroups = attachUnits(sourceOwner, kept.size());
  // The collapse's result dimensions: each kept group in result order.
  SmallVector<int64_t> resultOwner(groups.size(), -1);
  for (auto [position, group] : llvm::enumerate(kept)) {
    resultOwner[group] = position;
    result.permutation.push_back(sourcePosition[group]);
  }
  result.resultGroups = attachUnits(resultOwner, kept.size());
  return result;
}

/// `value` reshaped by `groups` into `type`: a collapse when `type` has
/// fewer dimensions, an expansion when more, `value` itself when the same.
static Value reshape(OpBuilder &b, Location loc, Value value,
                     RankedTensorType type,
                     ArrayRef<ReassociationIndices> groups) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getRank() > type.getRank())
    return tensor::CollapseShapeOp::create(b, loc, type, value, groups);
  if (from.getRank() < type.getRank())
    return tensor::ExpandShapeOp::create(b, loc, type, value, groups);
  return value;
}

/// The value of the collapse (of type `type`) of the transpose of `source`
/// that `regrouping` describes, built at the builder's insertion point.
static Value buildRegrouped(OpBuilder &b, Location loc, Value source,
                            const Regrouping &regrouping,
                            RankedTensorType type) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> collapsedShape;
  for (const ReassociationIndices &group : regrouping.sourceGroups) {
    int64_t size = 1;
    for (int64_t dim : group)
      size *= sourceType.getDimSize(dim);
    collapsedShape.push_back(size);
  }
  Value value = reshape(
      b, loc, source,
      RankedTensorType::get(collapsedShape, sourceType.getElementType()),
      regrouping.sourceGroups);
  if (regrouping.movesData()) {
    SmallVector<int64_t> shape;
    for (int64_t dim : regrouping.permutation)
      shape.push_back(collapsedShape[dim]);
    Value init =
        tensor::EmptyOp::create(b, loc, shape, sourceType.getElementType());
    value =
        linalg::TransposeOp::create(b, loc, value, init, regrouping.permutation)
            ->getResult(0);
  }
  return reshape(b, loc, value, type, regrouping.resultGroups);
}

/// Whether the smaller transpose of `regrouping` is the collapse's value
/// itself (no expansion after it) and every user of `collapse` is a library
/// product that reads it through its indexing map, keeping a library layout
/// (hasLibraryLayout): --ga-isolate-library-products then absorbs it, and it
/// moves no data either.
static bool absorbed(const Regrouping &regrouping,
                     tensor::CollapseShapeOp collapse) {
  if (static_cast<int64_t>(regrouping.permutation.size()) !=
      collapse.getResultType().getRank())
    return false;
  AffineMap permute = AffineMap::getPermutationMap(
      invertPermutationVector(regrouping.permutation), collapse.getContext());
  for (OpOperand &use : collapse->getUses()) {
    auto product = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!product || !isLibraryProduct(product) || !product.isDpsInput(&use))
      return false;
    SmallVector<AffineMap> maps = product.getIndexingMapsArray();
    AffineMap &map = maps[use.getOperandNumber()];
    map = permute.compose(map);
    if (!hasLibraryLayout(maps))
      return false;
  }
  return true;
}

struct RegroupTransposesPass
    : public ga::impl::RegroupTransposesBase<RegroupTransposesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> transposes;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() == 1 && asPermutation(op->getResult(0)))
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *transpose : transposes)
      rewriteTranspose(rewriter, transpose);
  }

  /// Rewrites the uses of `transpose` that the pass's rule allows; erases
  /// it when none is left.
  void rewriteTranspose(RewriterBase &rewriter, Operation *transpose) {
    Value result = transpose->getResult(0);
    Permutation permutation = *asPermutation(result);
    auto sourceType = dyn_cast<RankedTensorType>(permutation.source.getType());
    auto resultType = cast<RankedTensorType>(result.getType());
    if (!sourceType || !sourceType.hasStaticShape() ||
        !resultType.hasStaticShape())
      return;
    // Result dimension i is source dimension sourceDim[i].
    SmallVector<int64_t> sourceDim(resultType.getRank());
    for (unsigned j = 0; j < permutation.permute.getNumResults(); ++j)
      sourceDim[permutation.permute.getDimPosition(j)] = j;

    // Each dimension its own group: a transpose of unit dimensions only.
    SmallVector<ReassociationIndices> singletons;
    for (int64_t dim = 0; dim < resultType.getRank(); ++dim)
      singletons.push_back({dim});
    std::optional<Regrouping> whole =
        regroup(sourceDim, sourceType.getShape(), singletons);
    if (whole && !whole->movesData()) {
      rewriter.setInsertionPoint(transpose);
      rewriter.replaceOp(
          transpose, buildRegrouped(rewriter, transpose->getLoc(),
                                    permutation.source, *whole, resultType));
      ++numReshaped;
      return;
    }
    // Collapses of it: reshapes when no data moves, else (as its only user)
    // the smaller transpose of a collapse.
    for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
      auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
      if (!collapse)
        continue;
      std::optional<Regrouping> regrouping = regroup(
          sourceDim, sourceType.getShape(), collapse.getReassociationIndices());
      if (!regrouping ||
          (regrouping->movesData() &&
           !(result.hasOneUse() && absorbed(*regrouping, collapse))))
        continue;
      rewriter.setInsertionPoint(collapse);
      rewriter.replaceOp(collapse,
                         buildRegrouped(rewriter, collapse.getLoc(),
                                        permutation.source, *regrouping,
                                        collapse.getResultType()));
      ++(regrouping->movesData() ? numRegrouped : numReshaped);
    }
    if (result.use_empty())
      rewriter.eraseOp(transpose);
  }
};

} // namespace
