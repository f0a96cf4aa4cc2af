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
#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/IR/Diagnostics.h"
#include "ga/Utils/ConstantIndices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
    t.error(op) << DiagnosticCode::BatchDimensionsMisaligned
                << "operands are per-sample along different dimensions";
    return;
  }
  auto [dim, factor] = *layout;
  for (Type type : op->getResultTypes()) {
    if (!isa<RankedTensorType>(type)) {
      t.error(op) << DiagnosticCode::OpNotAnalyzed
                  << "elementwise op on per-sample values must produce ranked "
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
    t.error(op) << DiagnosticCode::DynamicSize
                << "size of a per-sample value queried with a non-constant "
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
    t.error(op) << DiagnosticCode::DynamicSize
                << "dynamic size of the non-batch dimension " << *index
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
    t.error(op) << DiagnosticCode::SamplesSelected
                << "slicing along the batch dimension selects samples; only "
                   "full slices of the batch dimension can be split into "
                   "micro-batches";
    return;
  }
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  if (dropped.test(d)) {
    t.error(op) << DiagnosticCode::SamplesSelected
                << "slice drops the batch dimension";
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
      t.error(op) << DiagnosticCode::BatchDimensionsMisaligned
                  << "source and destination are per-sample along different "
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
    t.error(op) << DiagnosticCode::SamplesSelected
                << "inserting along the batch dimension selects samples; "
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
    t.error(op) << DiagnosticCode::BatchesJoined << "reshaping " << src.stacks
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
      t.error(op) << DiagnosticCode::BatchDimensionReshaped
                  << "expanding the batch dimension with dynamic inner sizes "
                     "is not supported";
      return;
    }
    rest *= shape[group[k]];
  }
  if (src.factor % rest != 0) {
    t.error(op) << DiagnosticCode::BatchDimensionReshaped
                << "expanding the batch dimension splits samples apart";
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
        // Where the batch went says what to fix: a layout with the batch
        // dimension inward ([T, B] ids of a sequence-first model).
        t.error(op) << DiagnosticCode::BatchDimensionReshaped
                    << "collapsing the batch dimension into an outer "
                       "dimension interleaves samples: the batch is "
                       "dimension "
                    << src.dim << " of " << collapse.getSrcType()
                    << ", merged with dimension " << *before << " of size "
                    << shape[*before] << " before it";
        return;
      }
    }
    for (auto after = std::next(it); after != group.end(); ++after) {
      if (ShapedType::isDynamic(shape[*after])) {
        t.error(op) << DiagnosticCode::BatchDimensionReshaped
                    << "collapsing the batch dimension with dynamic inner "
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
    t.error(op) << DiagnosticCode::OpNotAnalyzed
                << "cast of a per-sample value to an unranked tensor";
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
    t.error(user) << DiagnosticCode::IndexedRead << "the region of '"
                  << op->getName()
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
    t.error(op) << DiagnosticCode::SamplesSelected
                << "padding along the batch dimension adds samples";
    return;
  }
  return finish(t, src.dim, src.factor);
}

static void transferConcat(BatchTransfer &t, tensor::ConcatOp concat) {
  Operation *op = concat;
  FailureOr<std::pair<int64_t, int64_t>> layout =
      t.getCommonLayout(concat.getInputs());
  if (failed(layout)) {
    t.error(op) << DiagnosticCode::BatchDimensionsMisaligned
                << "inputs are per-sample along different dimensions";
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
      t.error(op) << DiagnosticCode::BatchesJoined
                  << "concatenating a per-sample value with one that is "
                  << "not per-sample "
                  << (alongBatch ? "along the batch dimension mixes "
                                   "samples with other data"
                                 : "next to stacked batches");
      return;
    }
    if (!alongBatch && stacks && cls.stacks != stacks) {
      t.error(op) << DiagnosticCode::BatchesJoined
                  << "inputs stack different numbers of batches";
      return;
    }
    stacks = alongBatch ? stacks + cls.stacks : cls.stacks;
  }
  return finish(t, dim, factor, stacks);
}

static void transferExtract(BatchTransfer &t, tensor::ExtractOp extract) {
  t.error(extract) << DiagnosticCode::SamplesSelected
                   << "reading single elements of a per-sample value picks "
                      "samples; reduce over the batch first";
}

//===----------------------------------------------------------------------===//
// Re-creating tensor ops for one micro-batch
//===----------------------------------------------------------------------===//

/// The micro-batch type of the per-sample result of `op` (stacked batches:
/// `stacks` micro-batches one after the other).
static RankedTensorType getMicroResultType(MicroBatchBuilder &b,
                                           Operation *op) {
  BatchClass cls = b.getClass(op->getResult(0));
  return b.getMicroType(op->getResult(0).getType(), cls.dim,
                        cls.factor * cls.stacks);
}

Operation *mlir::ga::materializeElementwise(MicroBatchBuilder &b,
                                            Operation *op) {
  // Tensor operands have the result's shape: those that are not per-sample
  // are tiled along the batch dimension.
  BatchClass cls = b.getClass(op->getResult(0));
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(b.getAlong(operand, cls.dim, cls.factor));
  Operation *clone = b.clone(op, operands);
  for (OpResult result : clone->getResults())
    result.setType(b.getMicroType(result.getType(), cls.dim, cls.factor));
  return clone;
}

Value mlir::ga::recomputeElementwiseTile(MicroBatchBuilder &b, OpResult result,
                                         int64_t dim, int64_t factor) {
  Operation *op = result.getOwner();
  if (op->getNumResults() != 1)
    return nullptr;
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(b.getAlong(operand, dim, factor));
  Operation *clone = b.clone(op, operands);
  clone->getResult(0).setType(b.getMicroType(result.getType(), dim, factor));
  return clone->getResult(0);
}

static Operation *materializeExtractSlice(MicroBatchBuilder &b,
                                          tensor::ExtractSliceOp slice) {
  SmallVector<OpFoldResult> sizes =
      b.getMicroSizes(slice.getMixedSizes(), b.getClass(slice.getSource()));
  return tensor::ExtractSliceOp::create(
      b.getBuilder(), slice.getLoc(), getMicroResultType(b, slice),
      b.getMicro(slice.getSource()), b.getList(slice.getMixedOffsets()), sizes,
      b.getList(slice.getMixedStrides()));
}

static Operation *materializeInsertSlice(MicroBatchBuilder &b,
                                         tensor::InsertSliceOp insert) {
  BatchClass cls = b.getClass(insert.getResult());
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  int64_t sourceDim = 0;
  for (int64_t i = 0; i < cls.dim; ++i)
    sourceDim += !dropped.test(i);
  SmallVector<OpFoldResult> sizes =
      b.getMicroSizes(insert.getMixedSizes(), cls);
  return tensor::InsertSliceOp::create(
      b.getBuilder(), insert.getLoc(),
      b.getAlong(insert.getSource(), sourceDim, cls.factor),
      b.getAlong(insert.getDest(), cls.dim, cls.factor),
      b.getList(insert.getMixedOffsets()), sizes,
      b.getList(insert.getMixedStrides()));
}

static Operation *materializeExpandShape(MicroBatchBuilder &b,
                                         tensor::ExpandShapeOp expand) {
  SmallVector<OpFoldResult> shape = b.getMicroSizes(
      expand.getMixedOutputShape(), b.getClass(expand.getResult()));
  return tensor::ExpandShapeOp::create(
      b.getBuilder(), expand.getLoc(), getMicroResultType(b, expand),
      b.getMicro(expand.getSrc()), expand.getReassociationIndices(), shape);
}

static Operation *materializeCollapseShape(MicroBatchBuilder &b,
                                           tensor::CollapseShapeOp collapse) {
  return tensor::CollapseShapeOp::create(
      b.getBuilder(), collapse.getLoc(), getMicroResultType(b, collapse),
      b.getMicro(collapse.getSrc()), collapse.getReassociationIndices());
}

static Operation *materializeCast(MicroBatchBuilder &b, tensor::CastOp cast) {
  return tensor::CastOp::create(b.getBuilder(), cast.getLoc(),
                                getMicroResultType(b, cast),
                                b.getMicro(cast.getSource()));
}

static Operation *materializeConcat(MicroBatchBuilder &b,
                                    tensor::ConcatOp concat) {
  BatchClass cls = b.getClass(concat.getResult());
  SmallVector<Value> inputs;
  for (Value input : concat.getInputs())
    inputs.push_back(b.getAlong(input, cls.dim, cls.factor));
  return tensor::ConcatOp::create(b.getBuilder(), concat.getLoc(),
                                  getMicroResultType(b, concat),
                                  concat.getDim(), inputs);
}

static Operation *materializePad(MicroBatchBuilder &b, tensor::PadOp pad) {
  // The batch dimension is not padded (transferPad), and the region reads
  // no element of a per-sample value: the result type follows the source.
  BatchClass cls = b.getClass(pad.getResult());
  Value offset = b.getMicroOffset(cls.factor);
  SmallVector<Value> operands;
  for (Value operand : pad->getOperands())
    operands.push_back(b.get(operand));
  auto clone = cast<tensor::PadOp>(b.clone(pad, operands));
  clone.getResult().setType(getMicroResultType(b, pad));
  // The region computes the padding value at an index of the result: along
  // the batch dimension, the copy's index is the position in the
  // micro-batch, the original's the position in the whole batch.
  BlockArgument index = clone.getRegion().getArgument(cls.dim);
  if (!index.use_empty()) {
    OpBuilder &builder = b.getBuilder();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&clone.getRegion().front());
    Value global = arith::AddIOp::create(builder, pad.getLoc(), index, offset);
    index.replaceAllUsesExcept(global, global.getDefiningOp());
  }
  return clone;
}

/// An empty tensor whose dimension `dim` spans the batch, at micro-batch
/// size.
static Value recomputeEmptyTile(MicroBatchBuilder &b, tensor::EmptyOp empty,
                                int64_t dim, int64_t factor) {
  OpBuilder &builder = b.getBuilder();
  SmallVector<OpFoldResult> sizes;
  Value full = b.getUniform(empty.getResult());
  for (int64_t d = 0, e = empty.getType().getRank(); d < e; ++d)
    sizes.push_back(
        d == dim ? b.getMicroSize(factor)
                 : tensor::getMixedSize(builder, empty.getLoc(), full, d));
  return tensor::EmptyOp::create(builder, empty.getLoc(), sizes,
                                 empty.getType().getElementType());
}

namespace {
/// The model of a tensor op: its transfer function and its re-creation for
/// one micro-batch, above.
template <typename OpTy, void (*Transfer)(BatchTransfer &, OpTy),
          Operation *(*Materialize)(MicroBatchBuilder &, OpTy),
          bool KeepsStacks = false>
struct TensorOpModel
    : BatchTransferOpInterface::ExternalModel<
          TensorOpModel<OpTy, Transfer, Materialize, KeepsStacks>, OpTy> {
  void transferBatch(Operation *op, BatchTransfer &t) const {
    Transfer(t, cast<OpTy>(op));
  }
  bool keepsStackedBatches(Operation *) const { return KeepsStacks; }
  Operation *materializeAtMicroBatch(Operation *op,
                                     MicroBatchBuilder &b) const {
    return Materialize(b, cast<OpTy>(op));
  }
};

/// The model of a tensor op that is never per-sample: `tensor.dim` (the
/// size of a per-sample value is uniform) and `tensor.extract` (refused).
template <typename OpTy, void (*Transfer)(BatchTransfer &, OpTy)>
struct UniformTensorOpModel : BatchTransferOpInterface::ExternalModel<
                                  UniformTensorOpModel<OpTy, Transfer>, OpTy> {
  void transferBatch(Operation *op, BatchTransfer &t) const {
    Transfer(t, cast<OpTy>(op));
  }
};

/// `tensor.empty` reads no per-sample value; a batch-shaped one is
/// re-created at micro-batch size.
struct EmptyModel
    : BatchTransferOpInterface::ExternalModel<EmptyModel, tensor::EmptyOp> {
  void transferBatch(Operation *, BatchTransfer &) const {}
  Value recomputeTile(Operation *op, MicroBatchBuilder &b, OpResult,
                      int64_t dim, int64_t factor) const {
    return recomputeEmptyTile(b, cast<tensor::EmptyOp>(op), dim, factor);
  }
};

/// A splat constant reads nothing: a batch-shaped one is re-created as a
/// filled tensor at micro-batch size.
struct ConstantModel
    : BatchTransferOpInterface::ExternalModel<ConstantModel,
                                              arith::ConstantOp> {
  void transferBatch(Operation *, BatchTransfer &) const {}
  Value recomputeTile(Operation *op, MicroBatchBuilder &b, OpResult result,
                      int64_t dim, int64_t factor) const {
    auto dense =
        dyn_cast<SplatElementsAttr>(cast<arith::ConstantOp>(op).getValue());
    if (!dense)
      return nullptr;
    OpBuilder &builder = b.getBuilder();
    RankedTensorType type = b.getMicroType(result.getType(), dim, factor);
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      sizes.push_back(d == dim ? b.getMicroSize(factor)
                               : builder.getIndexAttr(type.getDimSize(d)));
    Value init = tensor::EmptyOp::create(builder, op->getLoc(), sizes,
                                         type.getElementType());
    Value scalar = arith::ConstantOp::create(
        builder, op->getLoc(),
        cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    return linalg::FillOp::create(builder, op->getLoc(), scalar, init)
        .getResult(0);
  }
};
} // namespace

void mlir::ga::registerTensorBatchModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    using namespace tensor;
    DimOp::attachInterface<UniformTensorOpModel<DimOp, transferDim>>(*ctx);
    ExtractSliceOp::attachInterface<TensorOpModel<
        ExtractSliceOp, transferExtractSlice, materializeExtractSlice>>(*ctx);
    InsertSliceOp::attachInterface<TensorOpModel<
        InsertSliceOp, transferInsertSlice, materializeInsertSlice>>(*ctx);
    ExpandShapeOp::attachInterface<TensorOpModel<
        ExpandShapeOp, transferExpandShape, materializeExpandShape, true>>(
        *ctx);
    CollapseShapeOp::attachInterface<TensorOpModel<
        CollapseShapeOp, transferCollapseShape, materializeCollapseShape>>(
        *ctx);
    CastOp::attachInterface<
        TensorOpModel<CastOp, transferCast, materializeCast, true>>(*ctx);
    PadOp::attachInterface<TensorOpModel<PadOp, transferPad, materializePad>>(
        *ctx);
    ConcatOp::attachInterface<
        TensorOpModel<ConcatOp, transferConcat, materializeConcat, true>>(*ctx);
    ExtractOp::attachInterface<
        UniformTensorOpModel<ExtractOp, transferExtract>>(*ctx);
    EmptyOp::attachInterface<EmptyModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    arith::ConstantOp::attachInterface<ConstantModel>(*ctx);
  });
}
