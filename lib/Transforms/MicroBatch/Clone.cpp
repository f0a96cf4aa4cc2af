//===- Clone.cpp - cloning ops for one micro-batch ------------------------===//
//
// Re-creates per-sample ops at micro-batch size inside a loop body: operands
// are sliced (or re-materialized) by the micro-batch's range of the batch
// loop, linalg.index of the batch loop is made global except where it
// indexes a micro-batch copy, and scf regions are cloned recursively.
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "ga/Analysis/BatchSlicing.h"

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

/// Re-creates the non-per-sample tensor `value`, whose dimension `dim` spans
/// the batch, for the current micro-batch: shape-only ops (empty, fill,
/// splat) and parallel computations (a bias broadcast) are rebuilt at
/// micro-batch size; anything else is sliced.
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
  RankedTensorType type = microType(inst, value.getType(), dim, factor);
  Value full = inst.mapping.lookupOrDefault(value);
  Operation *def = value.getDefiningOp();
  Value result;
  auto microSizes = [&](Value shaped) {
    SmallVector<OpFoldResult> sizes;
    auto shapedType = cast<RankedTensorType>(shaped.getType());
    for (int64_t d = 0; d < shapedType.getRank(); ++d)
      sizes.push_back(d == dim ? scaledSize(inst, factor)
                               : tensor::getMixedSize(
                                     builder, loc(),
                                     inst.mapping.lookupOrDefault(shaped), d));
    return sizes;
  };
  DenseElementsAttr dense;
  if (def && isa<tensor::EmptyOp>(def)) {
    result = tensor::EmptyOp::create(builder, loc(), microSizes(value),
                                     type.getElementType());
  } else if (auto fill = dyn_cast_if_present<linalg::FillOp>(def)) {
    Value init = rematerialize(inst, fill.getOutputs()[0], dim, factor);
    result = linalg::FillOp::create(
                 builder, loc(),
                 inst.mapping.lookupOrDefault(fill.getInputs()[0]), init)
                 .getResult(0);
  } else if (matchPattern(value, m_Constant(&dense)) && dense.isSplat()) {
    Value init = tensor::EmptyOp::create(builder, loc(), microSizes(value),
                                         type.getElementType());
    Value scalar = arith::ConstantOp::create(
        builder, loc(), cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    result = linalg::FillOp::create(builder, loc(), scalar, init).getResult(0);
  } else if (auto linalgOp = dyn_cast_if_present<linalg::LinalgOp>(def);
             linalgOp && linalgOp.hasPureTensorSemantics() &&
             def->getNumResults() == 1 && !analysis.isPerSample(def)) {
    // A parallel computation of a batch-shaped value (a broadcast), re-created
    // for the tile of the loop that indexes `dim` when every operand is
    // sliced exactly by that tile (BatchSlicing.h); otherwise the full value
    // is sliced below.
    AffineMap map =
        linalgOp.getIndexingMapMatchingResult(cast<OpResult>(value));
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(dim));
    FailureOr<LoopSlicing> slicing = failure();
    if (dimExpr && linalgOp.getIteratorTypesArray()[dimExpr.getPosition()] ==
                       utils::IteratorType::parallel)
      slicing = getLoopSlicing(linalgOp, dimExpr.getPosition());
    if (succeeded(slicing)) {
      int64_t loop = dimExpr.getPosition();
      SmallVector<Value> operands;
      for (OpOperand &operand : def->getOpOperands()) {
        std::optional<unsigned> position =
            slicing->operandDims[operand.getOperandNumber()];
        operands.push_back(
            position ? rematerialize(inst, operand.get(), *position, factor)
                     : inst.mapping.lookupOrDefault(operand.get()));
      }
      Operation *clone = cloneDetached(inst, def, operands);
      clone->getResult(0).setType(
          cast<linalg::LinalgOp>(clone).getDpsInits()[0].getType());
      offsetBatchIndices(inst, clone, loop, factor);
      result = clone->getResult(0);
    }
  } else if (def && OpTrait::hasElementwiseMappableTraits(def) &&
             def->getNumResults() == 1 && !analysis.isPerSample(def)) {
    SmallVector<Value> operands;
    for (Value operand : def->getOperands())
      operands.push_back(isa<RankedTensorType>(operand.getType())
                             ? rematerialize(inst, operand, dim, factor)
                             : inst.mapping.lookupOrDefault(operand));
    Operation *clone = cloneDetached(inst, def, operands);
    clone->getResult(0).setType(type);
    result = clone->getResult(0);
  }
  if (!result)
    result = sliceFull(inst, full, dim, factor);
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

Operation *
StepRewriter::cloneLinalg(Instance &inst, Operation *op,
                          ArrayRef<std::pair<unsigned, Value>> initOverrides) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  const PerSampleOpInfo *info = analysis.getOpInfo(op);
  int64_t loop = info->batchLoop, factor = info->factor;
  // The analysis accepted the op only with operands sliced exactly by the
  // batch loop.
  FailureOr<LoopSlicing> slicing = getLoopSlicing(linalgOp, loop);
  assert(succeeded(slicing) && "per-sample op accepted by the analysis");
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    auto override = llvm::find_if(initOverrides, [&](auto entry) {
      return entry.first == operand.getOperandNumber();
    });
    if (override != initOverrides.end()) {
      operands.push_back(override->second);
      continue;
    }
    if (analysis.getClass(value).isBatched()) {
      operands.push_back(getMicro(inst, value));
      continue;
    }
    std::optional<unsigned> position =
        succeeded(slicing) ? slicing->operandDims[operand.getOperandNumber()]
                           : std::nullopt;
    operands.push_back(position ? rematerialize(inst, value, *position, factor)
                                : inst.mapping.lookupOrDefault(value));
  }
  Operation *clone = cloneDetached(inst, op, operands);
  auto cloneLinalg = cast<linalg::LinalgOp>(clone);
  for (auto [result, init] :
       llvm::zip(clone->getResults(), cloneLinalg.getDpsInits()))
    result.setType(init.getType());
  // The clone's payload has the structure of the original: the uses the
  // analysis found to index captured per-sample values locally correspond
  // in walk order.
  SmallVector<Operation *> fromOps, toOps;
  op->walk([&](Operation *nested) { fromOps.push_back(nested); });
  clone->walk([&](Operation *nested) { toOps.push_back(nested); });
  DenseSet<OpOperand *> local;
  for (auto [original, cloned] : llvm::zip_equal(fromOps, toOps))
    for (auto [from, to] :
         llvm::zip_equal(original->getOpOperands(), cloned->getOpOperands()))
      if (analysis.isLocalBatchIndex(from))
        local.insert(&to);
  offsetBatchIndices(inst, clone, loop, factor, local);
  ++numPerSampleOps;
  return clone;
}

Operation *StepRewriter::cloneTensorOp(Instance &inst, Operation *op) {
  BatchClass cls = analysis.getClass(op->getResult(0));
  // Stacked batches: `stacks` micro-batches one after the other.
  RankedTensorType type = microType(inst, op->getResult(0).getType(), cls.dim,
                                    cls.factor * cls.stacks);
  auto mapped = [&](Value value) {
    return analysis.getClass(value).isBatched()
               ? getMicro(inst, value)
               : inst.mapping.lookupOrDefault(value);
  };
  auto mappedList = [&](ArrayRef<OpFoldResult> list) {
    SmallVector<OpFoldResult> result;
    for (OpFoldResult ofr : list)
      result.push_back(isa<Value>(ofr) ? OpFoldResult(mapped(cast<Value>(ofr)))
                                       : ofr);
    return result;
  };

  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    BatchClass src = analysis.getClass(slice.getSource());
    SmallVector<OpFoldResult> sizes = mappedList(slice.getMixedSizes());
    sizes[src.dim] = scaledSize(inst, src.factor);
    return tensor::ExtractSliceOp::create(
        builder, op->getLoc(), type, getMicro(inst, slice.getSource()),
        mappedList(slice.getMixedOffsets()), sizes,
        mappedList(slice.getMixedStrides()));
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    int64_t sourceDim = 0;
    for (int64_t i = 0; i < cls.dim; ++i)
      sourceDim += !dropped.test(i);
    Value source =
        analysis.getClass(insert.getSource()).isBatched()
            ? getMicro(inst, insert.getSource())
            : rematerialize(inst, insert.getSource(), sourceDim, cls.factor);
    Value dest =
        analysis.getClass(insert.getDest()).isBatched()
            ? getMicro(inst, insert.getDest())
            : rematerialize(inst, insert.getDest(), cls.dim, cls.factor);
    SmallVector<OpFoldResult> sizes = mappedList(insert.getMixedSizes());
    sizes[cls.dim] = scaledSize(inst, cls.factor);
    return tensor::InsertSliceOp::create(builder, op->getLoc(), source, dest,
                                         mappedList(insert.getMixedOffsets()),
                                         sizes,
                                         mappedList(insert.getMixedStrides()));
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    SmallVector<OpFoldResult> shape = mappedList(expand.getMixedOutputShape());
    shape[cls.dim] = scaledSize(inst, cls.factor);
    return tensor::ExpandShapeOp::create(
        builder, op->getLoc(), type, getMicro(inst, expand.getSrc()),
        expand.getReassociationIndices(), shape);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return tensor::CollapseShapeOp::create(builder, op->getLoc(), type,
                                           getMicro(inst, collapse.getSrc()),
                                           collapse.getReassociationIndices());
  if (auto castOp = dyn_cast<tensor::CastOp>(op))
    return tensor::CastOp::create(builder, op->getLoc(), type,
                                  getMicro(inst, castOp.getSource()));
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    SmallVector<Value> inputs;
    for (Value input : concat.getInputs())
      inputs.push_back(analysis.getClass(input).isBatched()
                           ? getMicro(inst, input)
                           : rematerialize(inst, input, cls.dim, cls.factor));
    return tensor::ConcatOp::create(builder, op->getLoc(), type,
                                    concat.getDim(), inputs);
  }
  // tensor.pad: the batch dimension is not padded, so the result type
  // follows the source.
  assert(isa<tensor::PadOp>(op) && "op accepted by the analysis");
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(mapped(operand));
  Operation *clone = cloneDetached(inst, op, operands);
  clone->getResult(0).setType(type);
  return clone;
}

Value StepRewriter::yieldedMicro(Instance &inst, Value value,
                                 const BatchClass &result) {
  if (!result.isBatched())
    return inst.mapping.lookupOrDefault(value);
  if (analysis.getClass(value).isBatched())
    return getMicro(inst, value);
  return rematerialize(inst, value, result.dim, result.factor);
}

/// Re-creates the ops of `from` at the end of `to` (whose arguments are
/// already mapped) and terminates it like `from`: with the mapped yield, or
/// the mapped condition of an scf.while.
void StepRewriter::cloneBlockBody(Instance &inst, Block &from, Block &to,
                                  ArrayRef<BatchClass> resultClasses) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&to);
  for (Operation &op : from.without_terminator())
    cloneLocal(inst, &op);
  Operation *terminator = from.getTerminator();
  auto condition = dyn_cast<scf::ConditionOp>(terminator);
  ValueRange forwarded =
      condition ? condition.getArgs() : terminator->getOperands();
  SmallVector<Value> yielded;
  for (auto [value, cls] : llvm::zip_equal(forwarded, resultClasses))
    yielded.push_back(yieldedMicro(inst, value, cls));
  if (condition)
    scf::ConditionOp::create(
        builder, terminator->getLoc(),
        inst.mapping.lookupOrDefault(condition.getCondition()), yielded);
  else
    scf::YieldOp::create(builder, terminator->getLoc(), yielded);
}

/// The micro-batch types of `values` (per-sample ones at micro-batch size).
SmallVector<Type>
StepRewriter::microTypes(Instance &inst, ValueRange values,
                         SmallVectorImpl<BatchClass> &classes) {
  SmallVector<Type> types;
  for (Value value : values) {
    BatchClass cls = analysis.getClass(value);
    classes.push_back(cls);
    types.push_back(cls.isBatched()
                        ? microType(inst, value.getType(), cls.dim, cls.factor)
                        : value.getType());
  }
  return types;
}

Operation *StepRewriter::cloneStructured(Instance &inst, Operation *op) {
  SmallVector<BatchClass> classes;
  SmallVector<Type> types = microTypes(inst, op->getResults(), classes);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    bool hasElse = !ifOp.getElseRegion().empty();
    auto clone = scf::IfOp::create(
        builder, op->getLoc(), types,
        inst.mapping.lookupOrDefault(ifOp.getCondition()), hasElse);
    for (auto [from, to] : llvm::zip(op->getRegions(), clone->getRegions())) {
      if (from.empty())
        continue;
      if (to.empty())
        to.emplaceBlock();
      Block &block = to.front();
      if (!block.empty())
        block.getTerminator()->erase();
      // A branch that never runs (its condition is constant) is re-created
      // as a copy of the one that does: what it would compute is irrelevant,
      // and the analysis did not classify it.
      Block *source = &from.front();
      if (analysis.isDead(source))
        source = &ifOp->getRegion(1 - from.getRegionNumber()).front();
      cloneBlockBody(inst, *source, block, classes);
    }
    return clone;
  }
  if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
    SmallVector<BatchClass> beforeClasses, afterClasses;
    SmallVector<Type> beforeTypes =
        microTypes(inst, whileOp.getBeforeArguments(), beforeClasses);
    SmallVector<Type> afterTypes =
        microTypes(inst, whileOp.getAfterArguments(), afterClasses);
    SmallVector<Value> inits;
    for (auto [init, cls] : llvm::zip_equal(whileOp.getInits(), beforeClasses))
      inits.push_back(yieldedMicro(inst, init, cls));
    auto clone = scf::WhileOp::create(builder, op->getLoc(), types, inits);
    SmallVector<Location> beforeLocs(beforeTypes.size(), op->getLoc());
    SmallVector<Location> afterLocs(afterTypes.size(), op->getLoc());
    Block *before =
        builder.createBlock(&clone.getBefore(), {}, beforeTypes, beforeLocs);
    Block *after =
        builder.createBlock(&clone.getAfter(), {}, afterTypes, afterLocs);
    builder.setInsertionPointAfter(clone);
    inst.mapping.map(whileOp.getBeforeArguments(), before->getArguments());
    inst.mapping.map(whileOp.getAfterArguments(), after->getArguments());
    // The condition forwards to the after region and to the results, whose
    // classes the framework joined from it.
    cloneBlockBody(inst, whileOp.getBefore().front(), *before, afterClasses);
    cloneBlockBody(inst, whileOp.getAfter().front(), *after, beforeClasses);
    return clone;
  }
  auto forOp = cast<scf::ForOp>(op);
  SmallVector<Value> inits;
  for (auto [init, cls] : llvm::zip(forOp.getInitArgs(), classes))
    inits.push_back(yieldedMicro(inst, init, cls));
  auto clone =
      scf::ForOp::create(builder, op->getLoc(),
                         inst.mapping.lookupOrDefault(forOp.getLowerBound()),
                         inst.mapping.lookupOrDefault(forOp.getUpperBound()),
                         inst.mapping.lookupOrDefault(forOp.getStep()), inits);
  Block &body = *clone.getBody();
  if (!body.empty())
    body.getTerminator()->erase();
  inst.mapping.map(forOp.getInductionVar(), clone.getInductionVar());
  inst.mapping.map(forOp.getRegionIterArgs(), clone.getRegionIterArgs());
  cloneBlockBody(inst, *forOp.getBody(), body, classes);
  return clone;
}

Operation *StepRewriter::clonePerSample(Instance &inst, Operation *op) {
  if (isa<linalg::LinalgOp>(op))
    return cloneLinalg(inst, op, {});
  if (isa<scf::IfOp, scf::ForOp, scf::WhileOp>(op))
    return cloneStructured(inst, op);
  ++numPerSampleOps;
  if (isa<tensor::TensorDialect>(op->getDialect()))
    return cloneTensorOp(inst, op);

  // Elementwise ops and linalg.softmax: tensor operands have the result's
  // shape, so non-per-sample ones are re-created along the batch dimension.
  BatchClass cls = analysis.getClass(op->getResult(0));
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    if (analysis.getClass(operand).isBatched())
      operands.push_back(getMicro(inst, operand));
    else if (isa<RankedTensorType>(operand.getType()))
      operands.push_back(rematerialize(inst, operand, cls.dim, cls.factor));
    else
      operands.push_back(inst.mapping.lookupOrDefault(operand));
  }
  Operation *clone = cloneDetached(inst, op, operands);
  for (OpResult result : clone->getResults())
    result.setType(microType(inst, result.getType(), cls.dim, cls.factor));
  return clone;
}

void StepRewriter::cloneLocal(Instance &inst, Operation *op) {
  Operation *clone;
  if (analysis.isPerSample(op)) {
    clone = clonePerSample(inst, op);
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
