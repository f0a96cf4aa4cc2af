//===- MicroBatch.cpp - training step to micro-batch loop -----------------===//
//
// Rewrites a training step into loops over micro-batches, driven by the
// batch-dependence analysis:
//
//   uniform ops            stay where they are (they precede the loops);
//   per-sample ops         are re-created at micro-batch size in the body of
//                          every loop that needs them;
//   reductions over batch  become loop-carried accumulators (ga.accumulate);
//   post-reduction ops     move after the loop whose results they need.
//
// Loops are numbered by level: level L > 1 exists only when a data-only
// statistic (a token count) reduced in loop L-1 feeds per-sample math.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/Analysis/Reductions.h"
#include "ga/IR/GAOps.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ga {
#define GEN_PASS_DEF_MICROBATCH
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The ops of the step that one loop level re-creates.
struct LevelPlan {
  /// Reductions that accumulate in this level's loop.
  SmallVector<Operation *> accumulated;
  /// Per-sample ops (and ghost-batch statistics) recomputed in the body.
  DenseSet<Operation *> local;
  /// Per-sample values returned by the step, assembled in the last loop.
  SmallVector<Value> assembled;
};

/// One loop-carried value.
struct Accumulator {
  enum class Kind { Combine, Ordered, Assemble };
  Kind kind;
  /// Combine/Ordered: the reduction and its result.
  Operation *reduction = nullptr;
  unsigned resultIndex = 0;
  /// Combine: the combining kind.
  vector::CombiningKind combiner = vector::CombiningKind::ADD;
  /// Combine: the value the original reduction started from, when it is
  /// itself reduced over the batch (an accumulation chain); combined after
  /// the loop.
  Value chainedInit;
  /// Assemble: the per-sample value.
  Value assembled;
  Value init;
};

/// A run of micro-batches of one size: `count` iterations, starting at
/// sample `start`. `size` is null when sizes are computed per iteration.
struct Segment {
  Value count;
  int64_t start = 0;
  std::optional<int64_t> size;
};

/// The state of one loop body: where the micro-batch lies and how the
/// original values map to their micro-batch counterparts.
struct Instance {
  /// The loop body; values shared by the whole micro-batch live in it.
  Block *body = nullptr;
  Value offset;
  OpFoldResult size;
  IRMapping mapping;
  DenseMap<int64_t, Value> scaledOffsets;
  DenseMap<int64_t, OpFoldResult> scaledSizes;
  /// Re-materialized values, per block (a value re-created inside a cloned
  /// scf region is visible there only).
  DenseMap<Block *, std::map<std::tuple<void *, int64_t, int64_t>, Value>>
      remat;
};

/// Rewrites one training step accepted by the batch-dependence analysis:
/// for each loop level, plans which ops the loop body needs, emits the loops
/// (one per micro-batch size) with their accumulators, replaces the
/// reductions by the loops' results, moves the post-reduction ops after their
/// loop and finally erases the original per-sample ops.
class StepRewriter {
public:
  struct Config {
    int64_t microBatches = 1;
    bool dynamicMicroBatches = false;
    FloatType accumulatorType;
  };

  StepRewriter(func::FuncOp func, const BatchDependence &analysis,
               const Config &config)
      : func(func), analysis(analysis), config(config),
        builder(func.getContext()), body(func.getBody().front()) {}

  LogicalResult run();

  int64_t numLoops = 0, numStatisticLoops = 0, numAccumulators = 0,
          numPerSampleOps = 0;

private:
  Location loc() { return func.getLoc(); }
  /// An index constant, created once at function entry.
  Value indexConstant(int64_t value) {
    Value &constant = indexConstants[value];
    if (!constant) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&body);
      constant = arith::ConstantIndexOp::create(builder, loc(), value);
    }
    return constant;
  }
  /// The full batch extent scaled by `factor`, defined at function entry.
  Value getFullExtent(int64_t factor);
  LevelPlan planLevel(unsigned level);
  SmallVector<Segment> buildSegments();
  void emitLevel(unsigned level, const LevelPlan &plan,
                 ArrayRef<Segment> segments);
  SmallVector<Accumulator> makeAccumulators(const LevelPlan &plan);
  void emitBody(Instance &inst, const LevelPlan &plan,
                ArrayRef<Accumulator> accs, ValueRange iterArgs,
                SmallVectorImpl<Value> &yields);

  // Micro-batch re-creation of ops and values.
  /// Moves the insertion point out of cloned scf regions, to just before
  /// the top-level op of the loop body being built.
  void setInsertionToBodyLevel(Instance &inst);
  Value scaledOffset(Instance &inst, int64_t factor);
  OpFoldResult scaledSize(Instance &inst, int64_t factor);
  RankedTensorType microType(Instance &inst, Type type, int64_t dim,
                             int64_t factor);
  Value getMicro(Instance &inst, Value value);
  Value rematerialize(Instance &inst, Value value, int64_t dim, int64_t factor);
  Value sliceFull(Instance &inst, Value full, int64_t dim, int64_t factor);
  Operation *cloneLinalg(Instance &inst, Operation *op,
                         ArrayRef<std::pair<unsigned, Value>> initOverrides);
  /// Makes the `linalg.index` of the batch loop in the clone `op` global
  /// (offset by the micro-batch's first sample), except at the `local`
  /// uses, which index micro-batch copies of captured per-sample values.
  void offsetBatchIndices(Instance &inst, Operation *op, int64_t loop,
                          int64_t factor,
                          const DenseSet<OpOperand *> &local = {});
  Operation *cloneDetached(Instance &inst, Operation *op,
                           ArrayRef<Value> operands);
  void cloneLocal(Instance &inst, Operation *op);
  Operation *clonePerSample(Instance &inst, Operation *op);
  Operation *cloneTensorOp(Instance &inst, Operation *op);
  Operation *cloneStructured(Instance &inst, Operation *op);
  /// The micro-batch value a per-sample result of a region op is yielded as.
  Value yieldedMicro(Instance &inst, Value value, const BatchClass &result);
  void cloneBlockBody(Instance &inst, Block &from, Block &to,
                      ArrayRef<BatchClass> resultClasses);

  func::FuncOp func;
  const BatchDependence &analysis;
  Config config;
  OpBuilder builder;
  Block &body;
  /// The ops of the step as written, in order.
  SmallVector<Operation *> originalOps;
  Value batchSize;
  DenseMap<int64_t, Value> fullExtents;
  DenseMap<int64_t, Value> indexConstants;
  /// The value that replaces each reduction result after its loop.
  DenseMap<Value, Value> finalValues;
  /// Dynamic sizing: N, q = B / N and r = B % N.
  Value numMicroBatches, quotient, remainder;
};

} // namespace

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

/// Converts the float tensor `value` to `elementType` elementwise, as a
/// `linalg.generic` (arith casts on tensors do not bufferize).
static Value convertElements(OpBuilder &builder, Location loc, Value value,
                             Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(
      builder, loc, tensor::getMixedSizes(builder, loc, value), elementType);
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ValueRange{value},
      ValueRange{init}, ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        Value converted =
            elementType.getIntOrFloatBitWidth() >
                    type.getElementType().getIntOrFloatBitWidth()
                ? arith::ExtFOp::create(b, nested, elementType, args[0])
                      .getResult()
                : arith::TruncFOp::create(b, nested, elementType, args[0])
                      .getResult();
        linalg::YieldOp::create(b, nested, converted);
      });
  return generic.getResult(0);
}

Value StepRewriter::getFullExtent(int64_t factor) {
  if (Value cached = fullExtents.lookup(factor))
    return cached;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfterValue(batchSize);
  Value extent = factor == 1 ? batchSize
                             : arith::MulIOp::create(builder, loc(), batchSize,
                                                     indexConstant(factor))
                                   .getResult();
  fullExtents[factor] = extent;
  return extent;
}

SmallVector<Segment> StepRewriter::buildSegments() {
  int64_t b = analysis.getBatchSize();
  int64_t n = config.microBatches;
  if (!config.dynamicMicroBatches && !ShapedType::isDynamic(b)) {
    // Static shapes: sizes ceil(B/N) then floor(B/N), one loop each.
    int64_t q = b / n, r = b % n;
    SmallVector<Segment> segments;
    if (r)
      segments.push_back({indexConstant(r), 0, q + 1});
    segments.push_back({indexConstant(n - r), r * (q + 1), q});
    return segments;
  }
  // Run-time sizes: iteration i covers q + (i < r) samples from
  // i * q + min(i, r).
  numMicroBatches = config.dynamicMicroBatches ? func.getArguments().back()
                                               : indexConstant(n);
  if (config.dynamicMicroBatches) {
    Value positive =
        arith::CmpIOp::create(builder, loc(), arith::CmpIPredicate::sge,
                              numMicroBatches, indexConstant(1));
    cf::AssertOp::create(builder, loc(), positive,
                         "ga: the number of micro-batches must be at least 1");
  }
  quotient = arith::DivUIOp::create(builder, loc(), batchSize, numMicroBatches);
  remainder =
      arith::RemUIOp::create(builder, loc(), batchSize, numMicroBatches);
  return {Segment{numMicroBatches, 0, std::nullopt}};
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

LevelPlan StepRewriter::planLevel(unsigned level) {
  LevelPlan plan;
  Operation *terminator = body.getTerminator();
  if (level == analysis.getNumLevels()) {
    for (Value result : terminator->getOperands())
      if (analysis.getClass(result).isBatched() && result.getDefiningOp() &&
          !llvm::is_contained(plan.assembled, result))
        plan.assembled.push_back(result);
  }
  DenseSet<Operation *> accumulated;
  for (Operation *op : originalOps)
    if (analysis.isBatchReduction(op) &&
        analysis.getReductionLoop(op) == level) {
      plan.accumulated.push_back(op);
      accumulated.insert(op);
    }

  // Walk backwards: an op is needed when a needed op or an accumulator uses
  // one of its per-sample results, or a statistic that is not available
  // before this loop (a ghost-batch statistic, recomputed locally).
  for (Value value : plan.assembled)
    plan.local.insert(value.getDefiningOp());
  for (Operation *op : llvm::reverse(originalOps)) {
    if (!plan.local.count(op) && !accumulated.count(op))
      continue;
    SmallVector<Value> inputs = getOpInputs(op);
    bool isAccumulatorOnly = accumulated.count(op) && !plan.local.count(op);
    for (Value input : inputs) {
      Operation *def = input.getDefiningOp();
      if (!def)
        continue;
      // An accumulator's chained init is combined after the loop.
      if (isAccumulatorOnly &&
          llvm::is_contained(cast<linalg::LinalgOp>(op).getDpsInits(), input) &&
          !analysis.getClass(input).isBatched())
        continue;
      BatchClass cls = analysis.getClass(input);
      if (cls.isBatched() ||
          (cls.isPostReduction() && analysis.getAvailableAfter(input) >= level))
        plan.local.insert(def);
    }
  }
  return plan;
}

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
    // A parallel computation of a batch-shaped value (a broadcast).
    AffineMap map =
        linalgOp.getIndexingMapMatchingResult(cast<OpResult>(value));
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(dim));
    if (dimExpr && linalgOp.getIteratorTypesArray()[dimExpr.getPosition()] ==
                       utils::IteratorType::parallel) {
      int64_t loop = dimExpr.getPosition();
      SmallVector<Value> operands;
      for (OpOperand &operand : def->getOpOperands()) {
        AffineMap operandMap = linalgOp.getMatchingIndexingMap(&operand);
        std::optional<unsigned> position = operandMap.getResultPosition(
            getAffineDimExpr(loop, def->getContext()));
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
  AffineExpr loopExpr = getAffineDimExpr(loop, op->getContext());
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
        linalgOp.getMatchingIndexingMap(&operand).getResultPosition(loopExpr);
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
  RankedTensorType type =
      microType(inst, op->getResult(0).getType(), cls.dim, cls.factor);
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
/// already mapped) and terminates it with the mapped yield.
void StepRewriter::cloneBlockBody(Instance &inst, Block &from, Block &to,
                                  ArrayRef<BatchClass> resultClasses) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&to);
  for (Operation &op : from.without_terminator())
    cloneLocal(inst, &op);
  SmallVector<Value> yielded;
  for (auto [value, cls] :
       llvm::zip(from.getTerminator()->getOperands(), resultClasses))
    yielded.push_back(yieldedMicro(inst, value, cls));
  scf::YieldOp::create(builder, from.getTerminator()->getLoc(), yielded);
}

Operation *StepRewriter::cloneStructured(Instance &inst, Operation *op) {
  SmallVector<BatchClass> classes;
  SmallVector<Type> types;
  for (Value result : op->getResults()) {
    BatchClass cls = analysis.getClass(result);
    classes.push_back(cls);
    types.push_back(cls.isBatched()
                        ? microType(inst, result.getType(), cls.dim, cls.factor)
                        : result.getType());
  }
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
      cloneBlockBody(inst, from.front(), block, classes);
    }
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
  if (isa<scf::IfOp, scf::ForOp>(op))
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

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

SmallVector<Accumulator> StepRewriter::makeAccumulators(const LevelPlan &plan) {
  SmallVector<Accumulator> accs;
  for (Operation *op : plan.accumulated) {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    const PerSampleOpInfo *info = analysis.getOpInfo(op);
    for (OpResult result : op->getResults()) {
      Accumulator acc;
      acc.reduction = op;
      acc.resultIndex = result.getResultNumber();
      Value init = linalgOp.getDpsInits()[acc.resultIndex];
      if (!info->hasNamedCombiners) {
        acc.kind = Accumulator::Kind::Ordered;
        acc.init = init;
        accs.push_back(acc);
        continue;
      }
      acc.kind = Accumulator::Kind::Combine;
      acc.combiner = *analysis.getClass(result).combiner;
      auto type = cast<RankedTensorType>(result.getType());
      Type elementType = type.getElementType();
      bool promote = config.accumulatorType && isa<FloatType>(elementType) &&
                     elementType.getIntOrFloatBitWidth() <
                         config.accumulatorType.getWidth();
      Type accElementType = promote ? config.accumulatorType : elementType;
      bool chained = analysis.getClass(init).isPostReduction();
      if (chained)
        acc.chainedInit = init;
      if (chained || (promote && isNeutralTensor(init, acc.combiner))) {
        Value empty = tensor::EmptyOp::create(
            builder, loc(), tensor::getMixedSizes(builder, loc(), init),
            accElementType);
        Value neutral = arith::ConstantOp::create(
            builder, loc(), getNeutralElement(acc.combiner, accElementType));
        acc.init =
            linalg::FillOp::create(builder, loc(), neutral, empty).getResult(0);
      } else if (promote) {
        acc.init = convertElements(builder, loc(), init, accElementType);
      } else {
        acc.init = init;
      }
      accs.push_back(acc);
    }
  }
  for (Value value : plan.assembled) {
    Accumulator acc;
    acc.kind = Accumulator::Kind::Assemble;
    acc.assembled = value;
    BatchClass cls = analysis.getClass(value);
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<Value> dynamicSizes;
    if (type.isDynamicDim(cls.dim))
      dynamicSizes.push_back(getFullExtent(cls.factor));
    acc.init = tensor::EmptyOp::create(builder, loc(), type.getShape(),
                                       type.getElementType(), dynamicSizes);
    accs.push_back(acc);
  }
  numAccumulators += accs.size();
  return accs;
}

void StepRewriter::emitBody(Instance &inst, const LevelPlan &plan,
                            ArrayRef<Accumulator> accs, ValueRange iterArgs,
                            SmallVectorImpl<Value> &yields) {
  yields.assign(iterArgs.begin(), iterArgs.end());
  DenseSet<Operation *> accumulated(plan.accumulated.begin(),
                                    plan.accumulated.end());
  for (Operation *opPtr : originalOps) {
    Operation &op = *opPtr;
    if (plan.local.count(&op))
      cloneLocal(inst, &op);
    if (!accumulated.count(&op))
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    SmallVector<std::pair<unsigned, Value>> overrides;
    SmallVector<unsigned> accIndices;
    for (auto [index, acc] : llvm::enumerate(accs)) {
      if (acc.reduction != &op)
        continue;
      accIndices.push_back(index);
      OpOperand *init = linalgOp.getDpsInitOperand(acc.resultIndex);
      Value start;
      if (acc.kind == Accumulator::Kind::Ordered) {
        start = iterArgs[index];
      } else if (isNeutralTensor(init->get(), acc.combiner) &&
                 analysis.getClass(init->get()).isUniform()) {
        start = init->get();
      } else {
        auto type = cast<RankedTensorType>(init->get().getType());
        Value empty = tensor::EmptyOp::create(
            builder, op.getLoc(),
            tensor::getMixedSizes(builder, op.getLoc(),
                                  inst.mapping.lookupOrDefault(init->get())),
            type.getElementType());
        Value neutral = arith::ConstantOp::create(
            builder, op.getLoc(),
            getNeutralElement(acc.combiner, type.getElementType()));
        start = linalg::FillOp::create(builder, op.getLoc(), neutral, empty)
                    .getResult(0);
      }
      overrides.push_back({init->getOperandNumber(), start});
    }
    Operation *clone = cloneLinalg(inst, &op, overrides);
    for (unsigned index : accIndices) {
      const Accumulator &acc = accs[index];
      Value partial = clone->getResult(acc.resultIndex);
      yields[index] =
          acc.kind == Accumulator::Kind::Ordered
              ? partial
              : AccumulateOp::create(builder, op.getLoc(), acc.combiner,
                                     partial, iterArgs[index])
                    .getResult();
    }
  }
  for (auto [index, acc] : llvm::enumerate(accs)) {
    if (acc.kind != Accumulator::Kind::Assemble)
      continue;
    BatchClass cls = analysis.getClass(acc.assembled);
    Value micro = getMicro(inst, acc.assembled);
    auto type = cast<RankedTensorType>(acc.assembled.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(builder, loc(), micro);
    offsets[cls.dim] = scaledOffset(inst, cls.factor);
    yields[index] = tensor::InsertSliceOp::create(
        builder, loc(), micro, iterArgs[index], offsets, sizes, strides);
  }
}

void StepRewriter::emitLevel(unsigned level, const LevelPlan &plan,
                             ArrayRef<Segment> segments) {
  SmallVector<Accumulator> accs = makeAccumulators(plan);
  SmallVector<Value> current;
  for (const Accumulator &acc : accs)
    current.push_back(acc.init);

  for (const Segment &segment : segments) {
    auto loop = scf::ForOp::create(
        builder, loc(), indexConstant(0), segment.count, indexConstant(1),
        current, [&](OpBuilder &b, Location, Value iv, ValueRange iterArgs) {
          OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPointToStart(b.getInsertionBlock());
          Instance inst;
          inst.body = b.getInsertionBlock();
          if (segment.size) {
            Value scaled = arith::MulIOp::create(builder, loc(), iv,
                                                 indexConstant(*segment.size));
            inst.offset =
                segment.start
                    ? arith::AddIOp::create(builder, loc(), scaled,
                                            indexConstant(segment.start))
                          .getResult()
                    : scaled;
            inst.size = builder.getIndexAttr(*segment.size);
          } else {
            Value isLong = arith::CmpIOp::create(
                builder, loc(), arith::CmpIPredicate::ult, iv, remainder);
            Value extra = arith::SelectOp::create(
                builder, loc(), isLong, indexConstant(1), indexConstant(0));
            inst.size = arith::AddIOp::create(builder, loc(), quotient, extra)
                            .getResult();
            Value base = arith::MulIOp::create(builder, loc(), iv, quotient);
            Value shift = arith::MinUIOp::create(builder, loc(), iv, remainder);
            inst.offset = arith::AddIOp::create(builder, loc(), base, shift);
          }
          SmallVector<Value> yields;
          emitBody(inst, plan, accs, iterArgs, yields);
          scf::YieldOp::create(builder, loc(), yields);
        });
    ++numLoops;
    if (level < analysis.getNumLevels())
      ++numStatisticLoops;
    current.assign(loop.getResults().begin(), loop.getResults().end());
  }

  // Results of the loop replace the reductions and per-sample results.
  Operation *terminator = body.getTerminator();
  for (auto [acc, value] : llvm::zip(accs, current)) {
    if (acc.kind == Accumulator::Kind::Assemble) {
      for (OpOperand &operand : terminator->getOpOperands())
        if (operand.get() == acc.assembled)
          operand.set(value);
      continue;
    }
    Value original = acc.reduction->getResult(acc.resultIndex);
    Value final = value;
    if (final.getType() != original.getType())
      final = convertElements(builder, loc(), final,
                              getElementTypeOrSelf(original.getType()));
    // A chain continues the final value of the reduction it started from,
    // which precedes it (same or earlier loop).
    if (acc.chainedInit)
      final = AccumulateOp::create(builder, loc(), acc.combiner, final,
                                   finalValues.lookup(acc.chainedInit));
    original.replaceAllUsesWith(final);
    finalValues[original] = final;
  }
}

LogicalResult StepRewriter::run() {
  Operation *terminator = body.getTerminator();
  if (config.dynamicMicroBatches)
    (void)func.insertArgument(func.getNumArguments(), builder.getIndexType(),
                              DictionaryAttr(), loc());

  // The batch size, at function entry.
  builder.setInsertionPointToStart(&body);
  int64_t staticSize = analysis.getBatchSize();
  if (!ShapedType::isDynamic(staticSize)) {
    batchSize = indexConstant(staticSize);
  } else {
    BlockArgument arg = analysis.getBatchArgs().front();
    batchSize =
        tensor::DimOp::create(builder, loc(), arg, analysis.getClass(arg).dim);
  }
  // `tensor.dim` of the batch dimension is the full batch size wherever it is
  // used as a number; the loop bodies size tensors themselves. The other
  // dimensions of per-sample values are static (the analysis refuses dynamic
  // ones).
  // This holds in regions too (a mean normalized inside an scf.if).
  SmallVector<tensor::DimOp> dims;
  func.walk([&](tensor::DimOp dim) { dims.push_back(dim); });
  for (tensor::DimOp dim : dims) {
    if (dim.getResult() == batchSize ||
        !analysis.getClass(dim.getSource()).isBatched())
      continue;
    if (std::optional<int64_t> factor =
            analysis.getBatchExtentFactor(dim.getResult())) {
      dim.getResult().replaceAllUsesWith(getFullExtent(*factor));
    } else {
      int64_t index = *dim.getConstantIndex();
      dim.getResult().replaceAllUsesWith(indexConstant(
          cast<ShapedType>(dim.getSource().getType()).getDimSize(index)));
    }
    dim.erase();
  }

  // Snapshot the original ops before anything moves.
  for (Operation &op : body.without_terminator())
    originalOps.push_back(&op);

  builder.setInsertionPoint(terminator);
  SmallVector<Segment> segments = buildSegments();
  for (unsigned level = 1; level <= analysis.getNumLevels(); ++level) {
    LevelPlan plan = planLevel(level);
    if (!plan.accumulated.empty() || !plan.assembled.empty())
      emitLevel(level, plan, segments);
    // Post-reduction ops available after this loop follow it, in order.
    for (Operation *op : originalOps) {
      if (analysis.isPerSample(op))
        continue;
      bool post = llvm::any_of(op->getResults(), [&](Value v) {
        return analysis.getClass(v).isPostReduction();
      });
      unsigned after = 0;
      for (Value operand : op->getOperands())
        after = std::max(after, analysis.getAvailableAfter(operand));
      if (op->getNumResults())
        after = analysis.getAvailableAfter(op->getResult(0));
      if ((post || after) && after == level)
        op->moveBefore(terminator);
    }
  }

  // The per-sample ops of the original step are now dead.
  for (Operation *op : llvm::reverse(originalOps)) {
    if (!analysis.isPerSample(op))
      continue;
    if (!op->use_empty()) {
      return op->emitError()
             << "internal error: per-sample op still used after the "
                "micro-batch rewrite";
    }
    op->erase();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct MicroBatchPass : public ga::impl::MicroBatchBase<MicroBatchPass> {
  using MicroBatchBase::MicroBatchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StepRewriter::Config config;
    config.microBatches = microBatches;
    config.dynamicMicroBatches = dynamicMicroBatches;
    if (!dynamicMicroBatches && microBatches < 1) {
      module.emitError() << "ga-micro-batch: micro-batches must be at least "
                            "1, got "
                         << static_cast<int64_t>(microBatches);
      return signalPassFailure();
    }
    if (!accumulatorType.empty()) {
      MLIRContext *ctx = &getContext();
      config.accumulatorType = llvm::StringSwitch<FloatType>(accumulatorType)
                                   .Case("f16", Float16Type::get(ctx))
                                   .Case("bf16", BFloat16Type::get(ctx))
                                   .Case("f32", Float32Type::get(ctx))
                                   .Case("f64", Float64Type::get(ctx))
                                   .Default(nullptr);
      if (!config.accumulatorType) {
        module.emitError() << "ga-micro-batch: accumulator-type must be one "
                              "of f16, bf16, f32, f64, got '"
                           << accumulatorType << "'";
        return signalPassFailure();
      }
    }

    FailureOr<SmallVector<func::FuncOp>> steps =
        collectTrainingSteps(module, funcNames);
    if (failed(steps))
      return signalPassFailure();
    if (steps->empty())
      module.emitWarning()
          << "ga-micro-batch: no function has a `ga.batch` argument, nothing "
             "was rewritten (mark per-sample arguments, or name them with "
             "batch-args)";
    BatchDependence::Options options;
    options.allowGhostBatch = allowGhostBatch;
    options.recomputeStatistics = recomputeStatistics;
    for (func::FuncOp func : *steps) {
      // Reuses the analysis of --ga-check-training-step when it ran just
      // before (its diagnostics were reported there).
      BatchDependence &analysis =
          getChildAnalysis<BatchDependenceAnalysis>(func).get(options);
      analysis.report();
      if (!analysis.succeeded() ||
          (!dynamicMicroBatches &&
           failed(checkMicroBatchCount(analysis, microBatches))))
        return signalPassFailure();
      StepRewriter rewriter(func, analysis, config);
      if (failed(rewriter.run()))
        return signalPassFailure();
      ++numFunctions;
      numLoops += rewriter.numLoops;
      numStatisticLoops += rewriter.numStatisticLoops;
      numAccumulators += rewriter.numAccumulators;
      numPerSampleOps += rewriter.numPerSampleOps;
    }
  }
};
} // namespace
