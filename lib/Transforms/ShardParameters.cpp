//===- ShardParameters.cpp - FSDP/ZeRO-3: parameters held as row shards ---===//
//
// --ga-shard-parameters: after --ga-shard-optimizer (ZeRO-1), the parameters
// themselves become this rank's rows: the step takes and returns them as
// row shards, all-gathers each parameter where the micro-batch loop reads it
// (once for the forward, once again for the backward, or once before the
// loops when the plan keeps it gathered) and reduce-scatters each gradient
// per micro-batch into a shard accumulator (or once after the loop, from
// the full accumulator, when the plan says so). See the pass description.
//
//===----------------------------------------------------------------------===//

#include "ga/IR/GAShardOps.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::ga {
#define GEN_PASS_DEF_SHARDPARAMETERS
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// `type` with dimension 0 cut to this rank's rows.
static RankedTensorType shardType(RankedTensorType type, int64_t rank,
                                  int64_t world) {
  auto [begin, end] =
      ReduceScatterOp::shardRows(type.getDimSize(0), world, rank);
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = end - begin;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Whether `op` is `tensor.extract_slice` of exactly this rank's rows of its
/// source (unit strides, zero offsets past dimension 0).
static bool isRowsSlice(Operation *op, int64_t rank, int64_t world) {
  auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
  if (!slice)
    return false;
  RankedTensorType source = slice.getSourceType();
  if (!source.hasStaticShape() || source.getRank() < 1)
    return false;
  auto [begin, end] =
      ReduceScatterOp::shardRows(source.getDimSize(0), world, rank);
  return slice.getType() == shardType(source, rank, world) &&
         slice.hasUnitStride() && slice.getStaticOffsets()[0] == begin &&
         llvm::all_of(slice.getStaticOffsets().drop_front(),
                      [](int64_t o) { return o == 0; });
}

/// The ops of the micro-batch loops' bodies (and of the function) that the
/// value `root` depends on: the forward, when `root` is the loss. Loop
/// results lead to their yielded values and inits, iteration arguments to
/// theirs, so the walk crosses the loops; values captured by regions count.
static DenseSet<Operation *> dependencies(Value root) {
  DenseSet<Operation *> ops;
  DenseSet<Value> seen;
  SmallVector<Value> worklist{root};
  auto pushLoopValue = [&](scf::ForOp loop, unsigned k) {
    worklist.push_back(loop.getInitArgs()[k]);
    worklist.push_back(loop.getYieldedValues()[k]);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (loop && arg.getArgNumber() >= 1)
        pushLoopValue(loop, arg.getArgNumber() - 1);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      pushLoopValue(loop, cast<OpResult>(value).getResultNumber());
      continue;
    }
    if (!ops.insert(def).second)
      continue;
    llvm::append_range(worklist, def->getOperands());
    def->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (!def->isAncestor(operand.getParentBlock()->getParentOp()))
          worklist.push_back(operand);
    });
  }
  return ops;
}

/// Whether the chain of ops from the loop's iteration argument `acc` to the
/// value it yields only adds to it: each link is the single use of the
/// previous value, as the init of a linalg op whose combiner for that init
/// is `arith.addf` of the init's element. Then the yielded value is
/// `acc + h` with h independent of `acc`, and h is the chain applied to 0.
static bool onlyAccumulated(BlockArgument acc, Value yielded) {
  Value value = acc;
  while (value != yielded) {
    if (!value.hasOneUse())
      return false;
    OpOperand &use = *value.getUses().begin();
    auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!linalgOp || !linalgOp.isDpsInit(&use) ||
        !linalgOp->getRegion(0).hasOneBlock())
      return false;
    BlockArgument element = linalgOp.getMatchingBlockArgument(&use);
    OpResult result = linalgOp.getTiedOpResult(&use);
    Operation *terminator = linalgOp.getBlock()->getTerminator();
    auto add = terminator->getOperand(result.getResultNumber())
                   .getDefiningOp<arith::AddFOp>();
    if (!add || !element.hasOneUse() ||
        (add.getLhs() != element && add.getRhs() != element))
      return false;
    value = result;
  }
  return true;
}

/// Whether `op` computes on values only (no memory effects): it can be
/// cloned into a loop and run there again.
static bool isRecomputable(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureTensorSemantics();
  return isMemoryEffectFree(op) && op->getNumRegions() == 0;
}

/// Moves the ops outside the loops that read `param` (transitively) and
/// whose results are read only inside the micro-batch loops (a transposed
/// weight, which --ga-accumulate computes once before the loop) into each
/// loop that reads them, before the first reader there: the whole parameter
/// is then needed only inside the loop, where it is gathered and resharded
/// (the copy before the loop would keep the whole tensor alive across it).
/// Returns how many ops moved.
static int64_t sinkIntoLoops(Block &entry, Value param) {
  int64_t moved = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    SetVector<Operation *> readers;
    SmallVector<Value> worklist{param};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers())
        if (user->getBlock() == &entry && !isa<scf::ForOp>(user) &&
            readers.insert(user))
          llvm::append_range(worklist, user->getResults());
    }
    SmallVector<Operation *> ordered = readers.takeVector();
    for (Operation *op : llvm::reverse(ordered)) {
      if (!isRecomputable(op) || op->getNumResults() == 0)
        continue;
      llvm::MapVector<scf::ForOp, Operation *> firstUse;
      bool onlyLoops = true;
      for (Operation *user : op->getUsers()) {
        auto loop = dyn_cast<scf::ForOp>(entry.findAncestorOpInBlock(*user));
        if (!loop || loop == user) {
          onlyLoops = false;
          break;
        }
        Operation *anchor = loop.getBody()->findAncestorOpInBlock(*user);
        Operation *&first = firstUse[loop];
        if (!first || anchor->isBeforeInBlock(first))
          first = anchor;
      }
      if (!onlyLoops || firstUse.empty())
        continue;
      for (auto [loop, first] : firstUse) {
        OpBuilder b(first);
        Operation *clone = b.clone(*op);
        for (auto [old, copy] :
             llvm::zip(op->getResults(), clone->getResults()))
          old.replaceUsesWithIf(copy, [&, loop = loop](OpOperand &use) {
            return loop->isProperAncestor(use.getOwner());
          });
      }
      op->erase();
      ++moved;
      changed = true;
      break; // the readers are collected again
    }
  }
  return moved;
}

/// Whether `value` is `linalg.fill` of the constant 0.0 (into anything).
static linalg::FillOp zeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return nullptr;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return attr && attr.getValue().isZero() ? fill : nullptr;
}

/// Bytes of the static tensor type `type`.
static int64_t bytesOf(RankedTensorType type) {
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

/// The plan as executed, per parameter: how many all-gathers of it (and
/// reduce-scatters of its gradient) run per micro-batch and per step outside
/// the loops, with the bytes of the whole tensor each moves. A remainder
/// loop runs the same body as the main loop: only the first loop counts.
static llvm::json::Array describePlan(func::FuncOp func,
                                      ArrayRef<int64_t> paramResults,
                                      ArrayRef<int64_t> paramArgs) {
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  Block &entry = func.getBody().front();
  llvm::json::Array plan;
  for (auto [res, arg] : llvm::zip(paramResults, paramArgs)) {
    int64_t counts[2][2] = {{0, 0}, {0, 0}}; // [scatter?][in a loop?]
    int64_t bytes[2] = {0, 0};
    SmallVector<Operation *> collectives;
    for (Operation *user : func.getArgument(arg).getUsers())
      if (isa<AllGatherOp>(user))
        collectives.push_back(user);
    for (Operation *op : dependencies(ret.getOperand(res)))
      if (isa<ReduceScatterOp>(op))
        collectives.push_back(op);
    Operation *firstLoop[2] = {nullptr, nullptr};
    for (Operation *op : collectives) {
      Operation *top = entry.findAncestorOpInBlock(*op);
      Operation *&first = firstLoop[isa<ReduceScatterOp>(op)];
      if (isa<scf::ForOp>(top) && (!first || top->isBeforeInBlock(first)))
        first = top;
    }
    for (Operation *op : collectives) {
      bool scatter = isa<ReduceScatterOp>(op);
      Operation *top = entry.findAncestorOpInBlock(*op);
      bool inLoop = isa<scf::ForOp>(top);
      if (inLoop && top != firstLoop[scatter])
        continue;
      ++counts[scatter][inLoop];
      bytes[scatter] = bytesOf(cast<RankedTensorType>(
          scatter ? op->getOperand(0).getType() : op->getResult(0).getType()));
    }
    plan.push_back(
        llvm::json::Object{{"result", res},
                           {"argument", arg},
                           {"gathers_per_micro_batch", counts[0][1]},
                           {"gathers_outside_loops", counts[0][0]},
                           {"gathered_bytes", bytes[0]},
                           {"scatters_per_micro_batch", counts[1][1]},
                           {"scatters_outside_loops", counts[1][0]},
                           {"scattered_bytes", bytes[1]}});
  }
  return plan;
}

namespace {
struct ShardParametersPass
    : public ga::impl::ShardParametersBase<ShardParametersPass> {
  using ShardParametersBase::ShardParametersBase;
  void runOnOperation() override;

private:
  LogicalResult shardParameter(func::FuncOp func, int64_t argIndex,
                               const DenseSet<Operation *> &forward,
                               bool keepGathered);
  bool scatterPerMicroBatch(ReduceScatterOp scatter);
};
} // namespace

/// Gathers parameter argument `argIndex` (already replaced by its rows, see
/// runOnOperation) where the loops read it: one `ga.all_gather` per group
/// of readers (per loop: its forward readers, its other readers; outside
/// the loops: one), or a single one before the first reader.
LogicalResult
ShardParametersPass::shardParameter(func::FuncOp func, int64_t argIndex,
                                    const DenseSet<Operation *> &forward,
                                    bool keepGathered) {
  BlockArgument full = func.getArgument(argIndex);
  BlockArgument rows = func.getArgument(argIndex + 1);
  Block &entry = func.getBody().front();
  // Readers of this rank's rows (the update) take the argument itself.
  for (Operation *user : llvm::make_early_inc_range(full.getUsers()))
    if (user->getBlock() == &entry && isRowsSlice(user, rank, world)) {
      user->getResult(0).replaceAllUsesWith(rows);
      user->erase();
    }
  // The groups of readers: (block, forward?) -> uses, in first-use order.
  using Key = std::pair<Block *, unsigned>;
  llvm::MapVector<Key, SmallVector<OpOperand *>> groups;
  for (OpOperand &use : full.getUses()) {
    Operation *top = entry.findAncestorOpInBlock(*use.getOwner());
    auto loop = dyn_cast<scf::ForOp>(top);
    Key key{&entry, 0};
    if (loop && !keepGathered) {
      Block *body = loop.getBody();
      Operation *anchor = body->findAncestorOpInBlock(*use.getOwner());
      key = {body, forward.contains(anchor) ? 1u : 0u};
    }
    groups[key].push_back(&use);
  }
  for (auto &[key, uses] : groups) {
    Block *block = key.first;
    Operation *first = nullptr;
    for (OpOperand *use : uses) {
      Operation *anchor = block->findAncestorOpInBlock(*use->getOwner());
      if (!first || anchor->isBeforeInBlock(first))
        first = anchor;
    }
    OpBuilder b(first);
    auto gather = AllGatherOp::create(b, full.getLoc(), full.getType(), rows,
                                      rank, world);
    for (OpOperand *use : uses)
      use->set(gather.getResult());
    ++numAllGathers;
  }
  return success();
}

/// A new tensor of `type` filled with `value`.
static Value createFilled(OpBuilder &b, Location loc, Value value,
                          RankedTensorType type) {
  return linalg::FillOp::create(b, loc, value,
                                tensor::EmptyOp::create(b, loc, type.getShape(),
                                                        type.getElementType())
                                    .getResult())
      .getResult(0);
}

/// Turns the full accumulator that `scatter` reduces after its loop into a
/// shard accumulator that each micro-batch's gradient is reduce-scattered
/// into; false (nothing changed) when the accumulator is not provably a sum
/// of the micro-batches' contributions from zero.
bool ShardParametersPass::scatterPerMicroBatch(ReduceScatterOp scatter) {
  if (scatter.getKind() != CollectiveKind::Sum ||
      !scatter.getInput().hasOneUse())
    return false;
  // The chain of loops carrying the accumulator, first loop first (a
  // remainder loop continues from the main loop's result).
  SmallVector<std::pair<scf::ForOp, unsigned>> chain;
  Value value = scatter.getInput();
  // A reshape between the loop and the collective (ZeRO-1 moves a bias's
  // 1xD -> D collapse there) is applied to each contribution instead: a
  // reshape only renames the elements.
  Operation *reshape = value.getDefiningOp();
  if (isa_and_present<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          reshape)) {
    value = reshape->getOperand(0);
    if (!value.hasOneUse())
      return false;
  } else {
    reshape = nullptr;
  }
  linalg::FillOp init;
  while (!init) {
    auto result = dyn_cast<OpResult>(value);
    auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
    if (!loop)
      return false;
    unsigned k = result.getResultNumber();
    if (!onlyAccumulated(loop.getRegionIterArgs()[k],
                         loop.getYieldedValues()[k]))
      return false;
    chain.insert(chain.begin(), {loop, k});
    value = loop.getInitArgs()[k];
    init = zeroFill(value);
    if (!init && !value.hasOneUse())
      return false;
  }
  auto fullType = cast<RankedTensorType>(
      chain.front().first.getRegionIterArgs()[chain.front().second].getType());
  RankedTensorType rowsType = scatter.getType();
  Location loc = scatter.getLoc();
  // The shard accumulator's zero before the first loop.
  OpBuilder b(chain.front().first);
  Value zero = init.getInputs()[0];
  Value rowsInit = createFilled(b, loc, zero, rowsType);
  for (auto [loop, k] : chain) {
    BlockArgument acc = loop.getRegionIterArgs()[k];
    Block *body = loop.getBody();
    // The micro-batch's contribution: the chain applied to a zero, made
    // right before the first op that reads the accumulator, so that its
    // whole-size buffer lives only from there to the reduce-scatter.
    Operation *firstReader = nullptr;
    for (Operation *user : acc.getUsers())
      if (Operation *inBody = body->findAncestorOpInBlock(*user))
        if (!firstReader || inBody->isBeforeInBlock(firstReader))
          firstReader = inBody;
    if (firstReader)
      b.setInsertionPoint(firstReader);
    else
      b.setInsertionPointToStart(body);
    Value fullZero = createFilled(b, loc, zero, fullType);
    acc.replaceAllUsesWith(fullZero);
    acc.setType(rowsType);
    Operation *yield = body->getTerminator();
    Value contribution = yield->getOperand(k);
    // Reduce-scattered as soon as it is complete (FSDP reduces each layer's
    // gradient as the backward leaves it), not at the end of the body: the
    // whole-size contributions of all parameters are then never live at
    // once.
    Operation *producer = contribution.getDefiningOp();
    if (producer && producer->getBlock() == body)
      b.setInsertionPointAfter(producer);
    else
      b.setInsertionPoint(yield);
    if (reshape) {
      IRMapping map;
      map.map(reshape->getOperand(0), contribution);
      contribution = b.clone(*reshape, map)->getResult(0);
    }
    auto reduced = ReduceScatterOp::create(
        b, loc, rowsType, CollectiveKind::Sum, contribution, rank, world);
    Value sum =
        linalg::AddOp::create(
            b, loc, ValueRange{acc, reduced.getResult()},
            ValueRange{tensor::EmptyOp::create(b, loc, rowsType.getShape(),
                                               rowsType.getElementType())
                           .getResult()})
            .getResult(0);
    yield->setOperand(k, sum);
    if (loop == chain.front().first)
      loop.getInitArgsMutable()[k].set(rowsInit);
    loop->getResult(k).setType(rowsType);
  }
  scatter.getResult().replaceAllUsesWith(
      chain.back().first->getResult(chain.back().second));
  scatter->erase();
  if (reshape)
    reshape->erase();
  if (init->use_empty())
    init->erase();
  return true;
}

void ShardParametersPass::runOnOperation() {
  if (world < 1 || rank < 0 || rank >= world) {
    getOperation().emitError("ga-shard-parameters: rank ")
        << static_cast<int64_t>(rank) << " of world "
        << static_cast<int64_t>(world) << " is out of range";
    return signalPassFailure();
  }
  auto func = getOperation().lookupSymbol<func::FuncOp>(funcName);
  if (!func || func.isExternal()) {
    getOperation().emitError("ga-shard-parameters: no function @") << funcName;
    return signalPassFailure();
  }
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (paramArgs.size() != paramResults.size()) {
    func.emitError("ga-shard-parameters: ")
        << paramResults.size() << " parameter results but " << paramArgs.size()
        << " parameter arguments";
    return signalPassFailure();
  }
  if (loss >= static_cast<int64_t>(ret.getNumOperands())) {
    func.emitError("ga-shard-parameters: loss result ")
        << static_cast<int64_t>(loss) << " out of range";
    return signalPassFailure();
  }
  // Gradients first: per micro-batch unless the plan reduces them after
  // the loop (the reduce-scatters that a listed parameter's update reads).
  DenseSet<Operation *> afterLoop;
  for (int64_t i : reduceAfterLoop) {
    if (i < 0 || i >= static_cast<int64_t>(ret.getNumOperands()))
      continue;
    DenseSet<Operation *> deps = dependencies(ret.getOperand(i));
    for (Operation *op : deps)
      if (isa<ReduceScatterOp>(op))
        afterLoop.insert(op);
  }
  SmallVector<ReduceScatterOp> scatters;
  for (auto op : func.getBody().front().getOps<ReduceScatterOp>())
    scatters.push_back(op);
  for (ReduceScatterOp scatter : scatters)
    if (!afterLoop.contains(scatter) && scatterPerMicroBatch(scatter))
      ++numScatteredPerMicroBatch;
  // The readers of whole parameters computed before the loops move into
  // them (unless the parameter stays gathered across the loops).
  for (int64_t arg : paramArgs)
    if (arg >= 0 && arg < static_cast<int64_t>(func.getNumArguments()) &&
        !llvm::is_contained(keepGathered, arg))
      numSunk += sinkIntoLoops(func.getBody().front(), func.getArgument(arg));
  DenseSet<Operation *> forward;
  if (loss >= 0)
    forward = dependencies(ret.getOperand(loss));
  // Then the parameters: each result the all-gathered rows of the update
  // becomes those rows, each argument a shard argument.
  SmallVector<int64_t> order(paramArgs.begin(), paramArgs.end());
  llvm::sort(order);
  for (auto [res, arg] : llvm::zip(paramResults, paramArgs)) {
    if (res < 0 || res >= static_cast<int64_t>(ret.getNumOperands()) ||
        arg < 0 || arg >= static_cast<int64_t>(func.getNumArguments())) {
      func.emitError("ga-shard-parameters: parameter result ")
          << res << " or argument " << arg << " out of range";
      return signalPassFailure();
    }
    auto gather = ret.getOperand(res).getDefiningOp<AllGatherOp>();
    if (!gather || gather.getType() != func.getArgument(arg).getType() ||
        static_cast<int64_t>(gather.getRank()) != rank ||
        static_cast<int64_t>(gather.getWorld()) != world) {
      func.emitError("ga-shard-parameters: result #")
          << res << " is not the all-gathered rows of parameter argument #"
          << arg << " (run --ga-shard-optimizer with the same rank first)";
      return signalPassFailure();
    }
    ret.setOperand(res, gather.getInput());
    if (gather->use_empty())
      gather->erase();
  }
  for (int64_t arg : llvm::reverse(order)) {
    BlockArgument old = func.getArgument(arg);
    auto type = cast<RankedTensorType>(old.getType());
    if (failed(func.insertArgument(arg + 1, shardType(type, rank, world),
                                   func.getArgAttrDict(arg), old.getLoc()))) {
      return signalPassFailure();
    }
    bool keep = llvm::is_contained(keepGathered, arg);
    if (failed(shardParameter(func, arg, forward, keep)))
      return signalPassFailure();
    if (failed(func.eraseArgument(arg)))
      return signalPassFailure();
  }
  func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                 ret.getOperandTypes()));
  if (planOutput.empty())
    return;
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file =
      openOutputFile(planOutput.getValue(), &error);
  if (!file) {
    func.emitError("ga-shard-parameters: ") << error;
    return signalPassFailure();
  }
  file->os() << llvm::json::Value(describePlan(func, paramResults, paramArgs))
             << "\n";
  file->keep();
}
