//===- Clone.cpp - cloning ops for one micro-batch ------------------------===//
//
// The rewrite's side of MicroBatchBuilder (ga/Analysis/MicroBatchBuilder.h):
// micro-batch copies of per-sample values (slices of the arguments, or what
// the ops' copies compute), tiles of batch-shaped values that are not
// per-sample, and the cloning primitives. How each op is re-created for a
// micro-batch is not decided here: the op family's
// BatchTransferOpInterface model, next to the transfer function that
// accepted it, builds it through this builder.
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "ga/Analysis/MicroBatchBuilder.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::micro_batch;

//===----------------------------------------------------------------------===//
// Micro-batch values
//===----------------------------------------------------------------------===//

void StepRewriter::setInsertionToBodyLevel(Instance &inst) {
  Block *block = builder.getInsertionBlock();
  if (block == inst.body)
    return;
  builder.setInsertionPoint(
      inst.body->findAncestorOpInBlock(*block->getParentOp()));
}

Value StepRewriter::scaledOffset(Instance &inst, int64_t factor) {
  if (factor == 1)
    return inst.offset;
  if (Value cached = inst.scaledOffsets.lookup(factor))
    return cached;
  OpBuilder::InsertionGuard guard(builder);
  setInsertionToBodyLevel(inst);
  Value scaled =
      arith::MulIOp::create(builder, loc(), inst.offset, indexConstant(factor));
  inst.scaledOffsets[factor] = scaled;
  return scaled;
}

OpFoldResult StepRewriter::scaledSize(Instance &inst, int64_t factor) {
  if (factor == 1)
    return inst.size;
  if (std::optional<int64_t> size = getConstantIntValue(inst.size))
    return builder.getIndexAttr(*size * factor);
  if (OpFoldResult cached = inst.scaledSizes.lookup(factor))
    return cached;
  OpBuilder::InsertionGuard guard(builder);
  setInsertionToBodyLevel(inst);
  OpFoldResult scaled =
      arith::MulIOp::create(builder, loc(), cast<Value>(inst.size),
                            indexConstant(factor))
          .getResult();
  inst.scaledSizes[factor] = scaled;
  return scaled;
}

RankedTensorType StepRewriter::microType(Instance &inst, Type type, int64_t dim,
                                         int64_t factor) {
  auto tensorType = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensorType.getShape());
  std::optional<int64_t> size = getConstantIntValue(inst.size);
  shape[dim] = size ? *size * factor : ShapedType::kDynamic;
  return tensorType.clone(shape);
}

Value StepRewriter::sliceFull(Instance &inst, Value full, int64_t dim,
                              int64_t factor) {
  auto type = cast<RankedTensorType>(full.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc(), full);
  offsets[dim] = scaledOffset(inst, factor);
  sizes[dim] = scaledSize(inst, factor);
  return tensor::ExtractSliceOp::create(builder, loc(),
                                        microType(inst, type, dim, factor),
                                        full, offsets, sizes, strides);
}

Value StepRewriter::getMicro(Instance &inst, Value value) {
  if (Value mapped = inst.mapping.lookupOrNull(value))
    return mapped;
  // Per-sample arguments are sliced on first use.
  auto arg = cast<BlockArgument>(value);
  BatchClass cls = analysis.getClass(arg);
  OpBuilder::InsertionGuard guard(builder);
  setInsertionToBodyLevel(inst);
  Value slice = sliceFull(inst, arg, cls.dim, cls.factor);
  inst.mapping.map(value, slice);
  return slice;
}

/// The tile of the non-per-sample tensor `value`, whose dimension `dim`
/// spans the batch, for the current micro-batch: recomputed when its
/// producer's model proves the tile is computed from tiles of its operands
/// (shape-only ops, parallel computations such as a bias broadcast), sliced
/// from the full value otherwise.
Value StepRewriter::rematerialize(Instance &inst, Value value, int64_t dim,
                                  int64_t factor) {
  auto key = std::make_tuple(value.getAsOpaquePointer(), dim, factor);
  for (Block *block = builder.getInsertionBlock();;
       block = block->getParentOp()->getBlock()) {
    auto &cache = inst.remat[block];
    if (auto it = cache.find(key); it != cache.end())
      return it->second;
    if (block == inst.body)
      break;
  }
  Value result;
  if (auto opResult = dyn_cast<OpResult>(value)) {
    InstanceBuilder b(*this, inst);
    result = recomputeTile(b, opResult, dim, factor);
  }
  if (!result)
    result = sliceFull(inst, inst.mapping.lookupOrDefault(value), dim, factor);
  inst.remat[builder.getInsertionBlock()][key] = result;
  return result;
}

void StepRewriter::offsetBatchIndices(Instance &inst, Operation *op,
                                      int64_t loop, int64_t factor,
                                      const DenseSet<OpOperand *> &local) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  Value offset = scaledOffset(inst, factor);
  for (auto index : llvm::make_early_inc_range(
           linalgOp.getBlock()->getOps<linalg::IndexOp>())) {
    if (static_cast<int64_t>(index.getDim()) != loop)
      continue;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfter(index);
    Value global =
        arith::AddIOp::create(builder, index.getLoc(), index, offset);
    index.getResult().replaceUsesWithIf(global, [&](OpOperand &use) {
      return use.getOwner() != global.getDefiningOp() && !local.count(&use);
    });
  }
}

//===----------------------------------------------------------------------===//
// Cloning ops into a loop body
//===----------------------------------------------------------------------===//

/// Clones `op` with `operands`; values its regions capture are mapped
/// through the instance. The instance's mapping is left untouched (the
/// caller decides what the clone stands for), and each clone gets fresh
/// region arguments even when the same op is cloned twice in one body.
Operation *StepRewriter::cloneDetached(Instance &inst, Operation *op,
                                       ArrayRef<Value> operands) {
  IRMapping mapping;
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value value : captured)
      mapping.map(value, analysis.getClass(value).isBatched()
                             ? getMicro(inst, value)
                             : inst.mapping.lookupOrDefault(value));
  }
  Operation *clone = builder.clone(*op, mapping);
  clone->setOperands(operands);
  return clone;
}

/// Re-creates the ops of `from` but its terminator at the end of `to`
/// (whose arguments are already mapped); the op's model terminates it.
void StepRewriter::cloneBlockBody(Instance &inst, Block &from, Block &to) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&to);
  for (Operation &op : from.without_terminator())
    cloneLocal(inst, &op);
}

Operation *
StepRewriter::materialize(Instance &inst, Operation *op,
                          ArrayRef<std::pair<unsigned, Value>> overrides) {
  if (failedMaterialize)
    return nullptr;
  InstanceBuilder b(*this, inst, overrides);
  if (Operation *clone = materializeOp(b, op)) {
    BatchTransferOpInterface model = dyn_cast<BatchTransferOpInterface>(op);
    if (!model || !model.holdsStepCode())
      ++numPerSampleOps;
    return clone;
  }
  // The analysis marks per-sample only ops whose family re-creates them;
  // should a model break that promise, the pass fails with the op named
  // instead of building wrong IR.
  op->emitError() << "internal error: the batch analysis accepted '"
                  << op->getName()
                  << "' but its model cannot re-create it for a micro-batch";
  failedMaterialize = true;
  return nullptr;
}

void StepRewriter::cloneLocal(Instance &inst, Operation *op) {
  Operation *clone;
  if (analysis.isPerSample(op)) {
    clone = materialize(inst, op);
    if (!clone) {
      // The pass fails: the copy stands for itself until it stops.
      inst.mapping.map(op->getResults(), op->getResults());
      return;
    }
  } else {
    // A post-reduction op of a ghost-batch statistic: same types, operands
    // from this micro-batch.
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(inst.mapping.lookupOrDefault(operand));
    clone = cloneDetached(inst, op, operands);
  }
  inst.mapping.map(op->getResults(), clone->getResults());
}

//===----------------------------------------------------------------------===//
// InstanceBuilder
//===----------------------------------------------------------------------===//

Value InstanceBuilder::getOverride(OpOperand &operand) {
  for (auto [number, value] : overrides)
    if (number == operand.getOperandNumber())
      return value;
  return nullptr;
}

OpBuilder &InstanceBuilder::getBuilder() { return rewriter.builder; }
const BatchDependence &InstanceBuilder::getAnalysis() const {
  return rewriter.analysis;
}
Value InstanceBuilder::getMicro(Value value) {
  return rewriter.getMicro(inst, value);
}
Value InstanceBuilder::getUniform(Value value) {
  return inst.mapping.lookupOrDefault(value);
}
Value InstanceBuilder::getTile(Value value, int64_t dim, int64_t factor) {
  return rewriter.rematerialize(inst, value, dim, factor);
}
OpFoldResult InstanceBuilder::getMicroSize(int64_t factor) {
  return rewriter.scaledSize(inst, factor);
}
Value InstanceBuilder::getMicroOffset(int64_t factor) {
  return rewriter.scaledOffset(inst, factor);
}
RankedTensorType InstanceBuilder::getMicroType(Type type, int64_t dim,
                                               int64_t factor) {
  return rewriter.microType(inst, type, dim, factor);
}
Operation *InstanceBuilder::clone(Operation *op, ArrayRef<Value> operands) {
  return rewriter.cloneDetached(inst, op, operands);
}
void InstanceBuilder::offsetBatchIndices(Operation *clone, int64_t loop,
                                         int64_t factor,
                                         const DenseSet<OpOperand *> &local) {
  rewriter.offsetBatchIndices(inst, clone, loop, factor, local);
}
void InstanceBuilder::map(ValueRange from, ValueRange to) {
  inst.mapping.map(from, to);
}
void InstanceBuilder::cloneBlock(Block &from, Block &to) {
  rewriter.cloneBlockBody(inst, from, to);
}
