//===- BatchTensorOps.cpp - the batch analysis of tensor ops --------------===//
//
// The transfer functions of elementwise ops and tensor ops (slices, reshapes,
// casts, padding, concatenation, sizes): where the batch dimension goes and
// how many entries of it one sample has. The size of the batch dimension
// (`tensor.dim`) is a uniform index marked as the batch extent. Each tensor
// op's function is attached to it as its BatchTransferOpInterface model; a
// tensor op without one is refused on per-sample values.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Utils/ConstantIndices.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::ga;

/// Every result of the op is per-sample along `dim` with `factor`, computed
/// in the loop where its inputs are available.
static void setBatchedResults(BatchTransfer &t, ArrayRef<Value> inputs,
                              int64_t dim, int64_t factor, int64_t stacks = 1) {
  unsigned level = t.checkCoupling(inputs);
  BatchClass cls = BatchClass::getBatched(dim, factor, stacks);
  cls.level = level;
  cls.dependsOnParams = t.joinInputs(inputs).dependsOnParams;
  t.setResults(cls);
  t.setPerSample();
}

void mlir::ga::transferElementwise(BatchTransfer &t) {
  Operation *op = t.getOp();
  FailureOr<std::pair<int64_t, int64_t>> layout =
      t.getCommonLayout(op->getOperands());
  if (failed(layout)) {
    t.error(op) << "operands are per-sample along different dimensions";
    return;
  }
  auto [dim, factor] = *layout;
  for (Type type : op->getResultTypes()) {
    if (!isa<RankedTensorType>(type)) {
      t.error(op) << "elementwise op on per-sample values must produce ranked "
                     "tensors, got "
                  << type;
      return;
    }
  }
  SmallVector<Value> inputs(op->getOperands());
  setBatchedResults(t, inputs, dim, factor);
}

/// Every result of the op is per-sample along `dim` with `factor` (and
/// `stacks` stacked batches).
static void finish(BatchTransfer &t, int64_t dim, int64_t factor,
                   int64_t stacks = 1) {
  setBatchedResults(t, getOpInputs(t.getOp()), dim, factor, stacks);
}

static void transferDim(BatchTransfer &t, tensor::DimOp dimOp) {
  Operation *op = dimOp;
  BatchClass src = t.getClass(dimOp.getSource());
  DimIndex dimIndex = getDimIndex(dimOp);
  if (dimIndex.isOutOfRange()) {
    appendDimIndexReason(t.error(op), dimIndex);
    return;
  }
  std::optional<int64_t> index = getConstantDimIndex(dimOp);
  if (!index) {
    t.error(op) << "size of a per-sample value queried with a non-constant "
                   "or out-of-range dimension";
    return;
  }
  BatchClass cls = BatchClass::getUniform();
  if (*index == src.dim) {
    // The batch size: a number wherever it is computed with, and the
    // micro-batch size wherever the rewrite shapes a tensor with it.
    cls.extentFactor = src.factor;
  } else if (cast<ShapedType>(dimOp.getSource().getType())
                 .isDynamicDim(*index)) {
    t.error(op) << "dynamic size of the non-batch dimension " << *index
                << " of a per-sample value is not supported";
    return;
  }
  t.setResults(cls);
  return;
}

static void transferExtractSlice(BatchTransfer &t,
                                 tensor::ExtractSliceOp slice) {
  Operation *op = slice;
  BatchClass src = t.getClass(slice.getSource());
  int64_t d = src.dim;
  std::optional<int64_t> offset =
      getConstantIntValue(slice.getMixedOffsets()[d]);
  std::optional<int64_t> stride =
      getConstantIntValue(slice.getMixedStrides()[d]);
  if (offset != 0 || stride != 1 ||
      !t.isFullExtent(slice.getMixedSizes()[d], slice.getSource(), d,
                      src.factor)) {
    t.error(op) << "slicing along the batch dimension selects samples; only "
                   "full slices of the batch dimension can be split into "
                   "micro-batches";
    return;
  }
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  if (dropped.test(d)) {
    t.error(op) << "slice drops the batch dimension";
    return;
  }
  int64_t newDim = d;
  for (int64_t i = 0; i < d; ++i)
    newDim -= dropped.test(i);
  return finish(t, newDim, src.factor);
}

static void transferInsertSlice(BatchTransfer &t,
                                tensor::InsertSliceOp insert) {
  Operation *op = insert;
  BatchClass src = t.getClass(insert.getSource());
  BatchClass dst = t.getClass(insert.getDest());
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  int64_t dim = -1, factor = 1;
  if (dst.isBatched()) {
    dim = dst.dim;
    factor = dst.factor;
  }
  if (src.isBatched()) {
    int64_t destDim = -1;
    for (int64_t i = 0, s = 0, e = dropped.size(); i < e; ++i) {
      if (dropped.test(i))
        continue;
      if (s++ == src.dim)
        destDim = i;
    }
    if (dim >= 0 && (destDim != dim || factor != src.factor)) {
      t.error(op) << "source and destination are per-sample along different "
                     "dimensions";
      return;
    }
    dim = destDim;
    factor = src.factor;
  }
  if (dim < 0 || dropped.test(dim) ||
      getConstantIntValue(insert.getMixedOffsets()[dim]) != 0 ||
      getConstantIntValue(insert.getMixedStrides()[dim]) != 1 ||
      !t.isFullExtent(insert.getMixedSizes()[dim], insert.getDest(), dim,
                      factor)) {
    t.error(op) << "inserting along the batch dimension selects samples; "
                   "only full slices of the batch dimension are supported";
    return;
  }
  return finish(t, dim, factor);
}

static void transferExpandShape(BatchTransfer &t,
                                tensor::ExpandShapeOp expand) {
  Operation *op = expand;
  BatchClass src = t.getClass(expand.getSrc());
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  ReassociationIndices group = expand.getReassociationIndices()[src.dim];
  // Stacked batches (torch.stack) become the leading dimensions of the
  // group: they must hold exactly the stacks.
  unsigned j = 0;
  int64_t stacks = 1;
  while (stacks < src.stacks && j + 1 < group.size() &&
         !ShapedType::isDynamic(shape[group[j]]))
    stacks *= shape[group[j++]];
  if (stacks != src.stacks) {
    t.error(op) << "reshaping " << src.stacks
                << " stacked batches splits a batch apart: the leading "
                   "dimensions of the reshaped batch dimension must hold "
                   "exactly the stacks";
    return;
  }
  while (j + 1 < group.size() && shape[group[j]] == 1)
    ++j;
  int64_t rest = 1;
  for (unsigned k = j + 1; k < group.size(); ++k) {
    if (ShapedType::isDynamic(shape[group[k]])) {
      t.error(op) << "expanding the batch dimension with dynamic inner sizes "
                     "is not supported";
      return;
    }
    rest *= shape[group[k]];
  }
  if (src.factor % rest != 0) {
    t.error(op) << "expanding the batch dimension splits samples apart";
    return;
  }
  return finish(t, group[j], src.factor / rest);
}

static void transferCollapseShape(BatchTransfer &t,
                                  tensor::CollapseShapeOp collapse) {
  Operation *op = collapse;
  BatchClass src = t.getClass(collapse.getSrc());
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  for (auto [index, group] :
       llvm::enumerate(collapse.getReassociationIndices())) {
    auto it = llvm::find(group, src.dim);
    if (it == group.end())
      continue;
    int64_t factor = src.factor;
    for (auto before = group.begin(); before != it; ++before) {
      if (shape[*before] != 1) {
        t.error(op) << "collapsing the batch dimension into an outer "
                       "dimension interleaves samples";
        return;
      }
    }
    for (auto after = std::next(it); after != group.end(); ++after) {
      if (ShapedType::isDynamic(shape[*after])) {
        t.error(op) << "collapsing the batch dimension with dynamic inner "
                       "sizes is not supported";
        return;
      }
      factor *= shape[*after];
    }
    return finish(t, index, factor);
  }
  llvm_unreachable("reassociation covers every source dimension");
}

static void transferCast(BatchTransfer &t, tensor::CastOp castOp) {
  Operation *op = castOp;
  BatchClass src = t.getClass(castOp.getSource());
  if (!isa<RankedTensorType>(castOp.getType())) {
    t.error(op) << "cast of a per-sample value to an unranked tensor";
    return;
  }
  return finish(t, src.dim, src.factor, src.stacks);
}

static void transferPad(BatchTransfer &t, tensor::PadOp pad) {
  Operation *op = pad;
  // The region computes the padding value: it may take the size of a
  // per-sample value, but an element it reads would be read at another
  // position (another sample) of the micro-batch's copy.
  SmallVector<Value> inputs = getOpInputs(op);
  for (Value captured :
       ArrayRef<Value>(inputs).drop_front(op->getNumOperands())) {
    if (!t.isBatched(captured) || t.isOnlySized(captured))
      continue;
    Operation *user = op;
    for (Operation *candidate : captured.getUsers())
      if (op->isProperAncestor(candidate))
        user = candidate;
    t.error(user) << "the region of '" << op->getName()
                  << "' reads a per-sample value: only linalg payloads may "
                     "read elements of per-sample values (with tensor.extract "
                     "at their own batch loop index); pass it as an operand "
                     "of a linalg op instead";
    return;
  }
  BatchClass src = t.getClass(pad.getSource());
  if (!src.isBatched()) {
    t.error(op) << "per-sample padding value";
    return;
  }
  if (getConstantIntValue(pad.getMixedLowPad()[src.dim]) != 0 ||
      getConstantIntValue(pad.getMixedHighPad()[src.dim]) != 0) {
    t.error(op) << "padding along the batch dimension adds samples";
    return;
  }
  return finish(t, src.dim, src.factor);
}

static void transferConcat(BatchTransfer &t, tensor::ConcatOp concat) {
  Operation *op = concat;
  FailureOr<std::pair<int64_t, int64_t>> layout =
      t.getCommonLayout(concat.getInputs());
  if (failed(layout)) {
    t.error(op) << "inputs are per-sample along different dimensions";
    return;
  }
  auto [dim, factor] = *layout;
  // Per-sample tensors concatenated along the batch dimension stack whole
  // batches one after the other (torch.stack before its reshape); along
  // another dimension they keep the layout, which must then be the same.
  bool alongBatch = static_cast<int64_t>(concat.getDim()) == dim;
  bool anyStacked = llvm::any_of(concat.getInputs(), [&](Value input) {
    return t.getClass(input).isStacked();
  });
  int64_t stacks = 0;
  for (Value input : concat.getInputs()) {
    BatchClass cls = t.getClass(input);
    if (!cls.isBatched()) {
      if (!alongBatch && !anyStacked)
        continue;
      t.error(op) << "concatenating a per-sample value with one that is "
                  << "not per-sample "
                  << (alongBatch ? "along the batch dimension mixes "
                                   "samples with other data"
                                 : "next to stacked batches");
      return;
    }
    if (!alongBatch && stacks && cls.stacks != stacks) {
      t.error(op) << "inputs stack different numbers of batches";
      return;
    }
    stacks = alongBatch ? stacks + cls.stacks : cls.stacks;
  }
  return finish(t, dim, factor, stacks);
}

static void transferExtract(BatchTransfer &t, tensor::ExtractOp extract) {
  t.error(extract) << "reading single elements of a per-sample value picks "
                      "samples; reduce over the batch first";
}

namespace {
/// The model of a tensor op: its transfer function above.
template <typename OpTy, void (*Transfer)(BatchTransfer &, OpTy),
          bool KeepsStacks = false>
struct TensorOpModel : BatchTransferOpInterface::ExternalModel<
                           TensorOpModel<OpTy, Transfer, KeepsStacks>, OpTy> {
  void transferBatch(Operation *op, BatchTransfer &t) const {
    Transfer(t, cast<OpTy>(op));
  }
  bool keepsStackedBatches(Operation *) const { return KeepsStacks; }
};
} // namespace

void mlir::ga::registerTensorBatchModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    using namespace tensor;
    DimOp::attachInterface<TensorOpModel<DimOp, transferDim>>(*ctx);
    ExtractSliceOp::attachInterface<
        TensorOpModel<ExtractSliceOp, transferExtractSlice>>(*ctx);
    InsertSliceOp::attachInterface<
        TensorOpModel<InsertSliceOp, transferInsertSlice>>(*ctx);
    ExpandShapeOp::attachInterface<
        TensorOpModel<ExpandShapeOp, transferExpandShape, true>>(*ctx);
    CollapseShapeOp::attachInterface<
        TensorOpModel<CollapseShapeOp, transferCollapseShape>>(*ctx);
    CastOp::attachInterface<TensorOpModel<CastOp, transferCast, true>>(*ctx);
    PadOp::attachInterface<TensorOpModel<PadOp, transferPad>>(*ctx);
    ConcatOp::attachInterface<TensorOpModel<ConcatOp, transferConcat, true>>(
        *ctx);
    ExtractOp::attachInterface<TensorOpModel<ExtractOp, transferExtract>>(*ctx);
  });
}
