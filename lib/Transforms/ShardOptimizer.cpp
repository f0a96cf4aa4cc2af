//===- ShardOptimizer.cpp - ZeRO-1: the update of this rank's rows --------===//
//
// --ga-shard-optimizer: restricts the parameter and optimizer-state updates
// of a data-parallel step to this rank's rows (the rows of dimension 0 that
// `ga.reduce_scatter` gives it), keeps only those rows of the optimizer
// state, all-gathers the new parameters and turns the gradient all-reduces
// that only those rows read into reduce-scatters. See the pass description.
//
//===----------------------------------------------------------------------===//

#include "ga/IR/GAShardOps.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ga {
#define GEN_PASS_DEF_SHARDOPTIMIZER
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Builds, for a value whose dimension 0 has D rows, the same value on this
/// rank's rows [begin, end) only, rebuilding elementwise producers on their
/// operands' rows (memoized: each op is rebuilt once).
class Restrictor {
public:
  Restrictor(int64_t rank, int64_t world,
             const DenseMap<Value, Value> &shardArgs)
      : rank(rank), world(world), shardArgs(shardArgs) {}

  /// `value` (a static tensor of rank >= 1) on this rank's rows.
  Value restrict(Value value);

  /// Rows [begin, end) of `value`'s dimension `dim`, sliced.
  Value slice(OpBuilder &b, Location loc, Value value, int64_t dim);

  int64_t numRestricted = 0;

private:
  std::pair<int64_t, int64_t> rows(Value value, int64_t dim) const {
    auto type = cast<RankedTensorType>(value.getType());
    return ReduceScatterOp::shardRows(type.getDimSize(dim), world, rank);
  }
  Value restrictGeneric(linalg::GenericOp generic, unsigned result);

  int64_t rank, world;
  const DenseMap<Value, Value> &shardArgs;
  DenseMap<Value, Value> done;
};
} // namespace

Value Restrictor::slice(OpBuilder &b, Location loc, Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  auto [begin, end] = rows(value, dim);
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  offsets[dim] = b.getIndexAttr(begin);
  sizes[dim] = b.getIndexAttr(end - begin);
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// Where the restriction of `value` is built: right after its definition.
static OpBuilder builderAfter(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return OpBuilder::atBlockBegin(arg.getOwner());
  OpBuilder b(value.getDefiningOp());
  b.setInsertionPointAfter(value.getDefiningOp());
  return b;
}

Value Restrictor::restrict(Value value) {
  if (auto it = done.find(value); it != done.end())
    return it->second;
  if (auto it = shardArgs.find(value); it != shardArgs.end())
    return it->second;
  Operation *def = value.getDefiningOp();
  Value restricted;
  if (auto generic = dyn_cast_if_present<linalg::GenericOp>(def))
    restricted =
        restrictGeneric(generic, cast<OpResult>(value).getResultNumber());
  if (!restricted) {
    OpBuilder b = builderAfter(value);
    Location loc = value.getLoc();
    auto type = cast<RankedTensorType>(value.getType());
    auto [begin, end] = rows(value, 0);
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = end - begin;
    if (auto empty = dyn_cast_if_present<tensor::EmptyOp>(def)) {
      restricted =
          tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    } else if (auto fill = dyn_cast_if_present<linalg::FillOp>(def)) {
      Value init = restrict(fill.getOutputs()[0]);
      b.setInsertionPointAfter(fill);
      if (init.getDefiningOp() && fill->isBeforeInBlock(init.getDefiningOp()))
        b.setInsertionPointAfter(init.getDefiningOp());
      restricted =
          linalg::FillOp::create(b, loc, fill.getInputs(), init).getResult(0);
    } else {
      restricted = slice(b, loc, value, 0);
    }
  }
  done[value] = restricted;
  return restricted;
}

/// The position of `dim` in `map` when it appears exactly once, as a result
/// of its own; -1 when it does not appear; nullopt when it appears inside an
/// expression or more than once.
static std::optional<int64_t> positionOf(AffineMap map, unsigned dim) {
  int64_t position = -1;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(dim))
      continue;
    auto dimExpr = dyn_cast<AffineDimExpr>(expr);
    if (!dimExpr || position != -1)
      return std::nullopt;
    position = i;
  }
  return position;
}

Value Restrictor::restrictGeneric(linalg::GenericOp generic, unsigned result) {
  // The loop that runs over the rows of the result.
  AffineMap resultMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(result));
  if (resultMap.getNumResults() == 0)
    return {};
  auto rowExpr = dyn_cast<AffineDimExpr>(resultMap.getResult(0));
  if (!rowExpr || generic.getIteratorTypesArray()[rowExpr.getPosition()] !=
                      utils::IteratorType::parallel)
    return {};
  unsigned loop = rowExpr.getPosition();
  // Each operand indexed by that loop is read on its rows along the
  // dimension the loop indexes; the others whole. The body must not ask
  // for the loop's index (it would change).
  bool usesIndex = false;
  generic.getRegion().walk(
      [&](linalg::IndexOp index) { usesIndex |= index.getDim() == loop; });
  if (usesIndex)
    return {};
  SmallVector<std::pair<OpOperand *, int64_t>> sliced;
  for (OpOperand &operand : generic->getOpOperands()) {
    std::optional<int64_t> position =
        positionOf(generic.getMatchingIndexingMap(&operand), loop);
    if (!position)
      return {};
    if (*position >= 0)
      sliced.push_back({&operand, *position});
  }
  // Every operand restricted first (built after their producers), then
  // the op, after all of them.
  SmallVector<Value> operands(generic->getOperands());
  for (auto [operand, position] : sliced) {
    Value full = operand->get();
    auto type = cast<RankedTensorType>(full.getType());
    if (!type.hasStaticShape())
      return {};
    if (position == 0) {
      operands[operand->getOperandNumber()] = restrict(full);
    } else {
      OpBuilder b = builderAfter(full);
      operands[operand->getOperandNumber()] =
          slice(b, generic.getLoc(), full, position);
    }
  }
  OpBuilder b(generic);
  b.setInsertionPointAfter(generic);
  for (Value operand : operands)
    if (Operation *producer = operand.getDefiningOp())
      if (producer->getBlock() == generic->getBlock() &&
          b.getInsertionPoint() != producer->getBlock()->end() &&
          !producer->isBeforeInBlock(&*b.getInsertionPoint()))
        b.setInsertionPointAfter(producer);
  Operation *clone = b.clone(*generic);
  clone->setOperands(operands);
  auto rebuilt = cast<linalg::GenericOp>(clone);
  for (auto [i, init] : llvm::enumerate(rebuilt.getDpsInits()))
    rebuilt->getResult(i).setType(init.getType());
  ++numRestricted;
  // The other results whose rows are this loop's are restricted as well.
  for (unsigned i = 0; i < generic->getNumResults(); ++i) {
    AffineMap map =
        generic.getMatchingIndexingMap(generic.getDpsInitOperand(i));
    if (map.getNumResults() > 0 && map.getResult(0) == rowExpr)
      done[generic->getResult(i)] = rebuilt->getResult(i);
  }
  return rebuilt->getResult(result);
}

namespace {
struct ShardOptimizerPass
    : public ga::impl::ShardOptimizerBase<ShardOptimizerPass> {
  using ShardOptimizerBase::ShardOptimizerBase;
  void runOnOperation() override;

private:
  LogicalResult shard(func::FuncOp func);
};
} // namespace

/// Whether `type` can be sharded by rows.
static bool shardable(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 1 && tensor.hasStaticShape();
}

/// Whether every reader of `value` (a static tensor of rank >= 1) takes
/// exactly this rank's rows of it (a unit-stride slice at row `begin`).
static bool onlyRowsRead(Value value, int64_t rank, int64_t world) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!shardable(type) || value.use_empty())
    return false;
  auto [begin, end] =
      ReduceScatterOp::shardRows(type.getDimSize(0), world, rank);
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = end - begin;
  auto shardType = RankedTensorType::get(shape, type.getElementType());
  int64_t first = begin;
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    return slice && slice.getType() == shardType && slice.hasUnitStride() &&
           slice.getStaticOffsets()[0] == first &&
           llvm::all_of(slice.getStaticOffsets().drop_front(),
                        [](int64_t o) { return o == 0; });
  });
}

/// `op`'s reduced value as this rank's rows read it: the result itself, or,
/// when its only reader is a reshape (a bias's 1xD gradient read as D
/// rows), that reshape moved before the collective. An all-reduce combines
/// the ranks' tensors element by element and a reshape only renames the
/// elements, so both orders give the same tensor. Null when the rows read
/// are not this rank's (the all-reduce stays, unchanged).
static AllReduceOp rowsReduced(AllReduceOp op, int64_t rank, int64_t world) {
  if (onlyRowsRead(op.getResult(), rank, world))
    return op;
  if (!op->hasOneUse())
    return nullptr;
  Operation *reshape = *op->getUsers().begin();
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(reshape) ||
      !onlyRowsRead(reshape->getResult(0), rank, world))
    return nullptr;
  OpBuilder b(op);
  IRMapping map;
  map.map(op.getResult(), op.getInput());
  Operation *input = b.clone(*reshape, map);
  auto hoisted = AllReduceOp::create(b, op.getLoc(), op.getKind(),
                                     input->getResult(0), op.getBucketAttr());
  reshape->getResult(0).replaceAllUsesWith(hoisted.getResult());
  reshape->erase();
  op->erase();
  return hoisted;
}

/// Replaces each `ga.all_reduce` whose readers all take this rank's rows by
/// a `ga.reduce_scatter`; returns how many.
static int64_t toReduceScatters(func::FuncOp func, int64_t rank,
                                int64_t world) {
  SmallVector<AllReduceOp> candidates;
  func.walk([&](AllReduceOp op) { candidates.push_back(op); });
  int64_t count = 0;
  for (AllReduceOp candidate : candidates) {
    AllReduceOp op = rowsReduced(candidate, rank, world);
    if (!op)
      continue;
    RankedTensorType type = op.getType();
    int64_t begin, end;
    std::tie(begin, end) =
        ReduceScatterOp::shardRows(type.getDimSize(0), world, rank);
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = end - begin;
    OpBuilder b(op);
    auto scatter = ReduceScatterOp::create(
        b, op.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        op.getKind(), op.getInput(), rank, world);
    for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
      user->getResult(0).replaceAllUsesWith(scatter.getResult());
      user->erase();
    }
    op->erase();
    ++count;
  }
  return count;
}

/// Erases the ops of `func`'s body that nothing uses and that have no
/// effect (the unsharded updates), last ones first. The walk visits an op
/// after its nested ops and erases only the op it visits (the walk has
/// already stepped past it): a list of ops collected beforehand would still
/// hold the nested ops of an erased region-holding op (a dead
/// `linalg.generic`'s body), which are freed with it.
static void eraseDead(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    func.walk<WalkOrder::PostOrder, ReverseIterator>([&](Operation *op) {
      if (op != func && isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
    });
  }
}

LogicalResult ShardOptimizerPass::shard(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  unsigned numResults = ret.getNumOperands(), numArgs = func.getNumArguments();
  if (stateResults.size() != stateArgs.size())
    return func.emitError("ga-shard-optimizer: ")
           << stateResults.size() << " state results but " << stateArgs.size()
           << " state arguments";
  // Indices in range, types that have rows.
  auto check = [&](int64_t index, unsigned count, StringRef what,
                   function_ref<Type(unsigned)> typeOf) -> LogicalResult {
    if (index < 0 || index >= count)
      return func.emitError("ga-shard-optimizer: ")
             << what << " index " << index << " out of range";
    if (!shardable(typeOf(index)))
      return func.emitError("ga-shard-optimizer: ")
             << what << " #" << index
             << " is not a static tensor of rank >= 1: " << typeOf(index);
    return success();
  };
  auto resultType = [&](unsigned i) { return ret.getOperand(i).getType(); };
  auto argType = [&](unsigned i) { return func.getArgument(i).getType(); };
  for (int64_t i : params)
    if (failed(check(i, numResults, "result", resultType)))
      return failure();
  for (auto [res, arg] : llvm::zip(stateResults, stateArgs)) {
    if (failed(check(res, numResults, "result", resultType)) ||
        failed(check(arg, numArgs, "argument", argType)))
      return failure();
    if (resultType(res) != argType(arg))
      return func.emitError("ga-shard-optimizer: state result #")
             << res << " and argument #" << arg << " differ in type";
  }
  DenseMap<Value, Value> shardArgs;
  SmallVector<BlockArgument> oldArgs;
  // The state arguments' replacements, one each, right after them.
  SmallVector<int64_t> argOrder(stateArgs.begin(), stateArgs.end());
  llvm::sort(argOrder);
  argOrder.erase(llvm::unique(argOrder), argOrder.end());
  for (int64_t arg : llvm::reverse(argOrder)) {
    BlockArgument old = func.getArgument(arg);
    auto type = cast<RankedTensorType>(old.getType());
    int64_t begin, end;
    std::tie(begin, end) =
        ReduceScatterOp::shardRows(type.getDimSize(0), world, rank);
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = end - begin;
    if (failed(func.insertArgument(
            arg + 1, RankedTensorType::get(shape, type.getElementType()),
            func.getArgAttrDict(arg), old.getLoc())))
      return failure();
    shardArgs[func.getArgument(arg)] = func.getArgument(arg + 1);
    oldArgs.push_back(func.getArgument(arg));
  }

  Restrictor restrictor(rank, world, shardArgs);
  for (int64_t i : params) {
    Value full = ret.getOperand(i);
    Value rows = restrictor.restrict(full);
    OpBuilder b(ret);
    ret.setOperand(i, AllGatherOp::create(b, full.getLoc(), full.getType(),
                                          rows, rank, world));
    ++numAllGathers;
  }
  for (int64_t i : stateResults)
    ret.setOperand(i, restrictor.restrict(ret.getOperand(i)));
  numRestricted += restrictor.numRestricted;

  eraseDead(func);
  numReduceScatters += toReduceScatters(func, rank, world);
  eraseDead(func);

  // The old state arguments must be dead now.
  for (BlockArgument old : oldArgs)
    if (!old.use_empty())
      return (*old.getUsers().begin())->emitError("ga-shard-optimizer: ")
             << "optimizer state argument #" << old.getArgNumber()
             << " is read in full by this op: its update is not row by row, "
                "so the state cannot be sharded";
  llvm::BitVector erase(func.getNumArguments());
  for (BlockArgument old : oldArgs)
    erase.set(old.getArgNumber());
  if (failed(func.eraseArguments(erase)))
    return failure();
  func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                 ret.getOperandTypes()));
  return success();
}

void ShardOptimizerPass::runOnOperation() {
  if (world < 1 || rank < 0 || rank >= world) {
    getOperation().emitError("ga-shard-optimizer: rank ")
        << static_cast<int64_t>(rank) << " of world "
        << static_cast<int64_t>(world) << " is out of range";
    return signalPassFailure();
  }
  auto func = getOperation().lookupSymbol<func::FuncOp>(funcName);
  if (!func || func.isExternal()) {
    getOperation().emitError("ga-shard-optimizer: no function @") << funcName;
    return signalPassFailure();
  }
  if (failed(shard(func)))
    signalPassFailure();
}
