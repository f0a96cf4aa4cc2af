//===- StepWork.cpp - the work and memory traffic of a rewritten step -----===//
//
// What --ga-choose-micro-batches compares candidates' time by: the work of
// the step rewritten with N micro-batches and a recompute set, counted on
// its tensor ops, and the bytes its ops read from beyond a cache of a given
// size (an LRU cache replayed over the reads in program order).
//
//===----------------------------------------------------------------------===//

#include "StepMemory.h"

#include "ga/Pipelines/Pipelines.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Pass/PassManager.h"

#if defined(__linux__)
#include <unistd.h>
#endif

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

/// The work of one linalg op: its iterations times the operations of its
/// payload (at least one: a copy, a fill), 0 when a loop has no static
/// size.
static int64_t getOpWork(linalg::LinalgOp op) {
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return 0;
    iterations *= range;
  }
  int64_t payload = 0;
  if (Block *body = op.getBlock())
    payload = std::distance(body->begin(), body->end()) - 1;
  return iterations * std::max<int64_t>(payload, 1);
}

/// The work of the element-wise ops on whole tensors (before their
/// conversion to linalg): one operation per element.
static int64_t getTensorOpWork(Operation *op) {
  if (!OpTrait::hasElementwiseMappableTraits(op) || op->getNumResults() != 1)
    return 0;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// The bytes of a tensor of static shape, or 0 (a value the model ignores).
static int64_t getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return 0;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
}

namespace {
/// One event of the replay: a read or a write of a storage, or its death.
struct Access {
  enum Kind { Read, Write, Kill } kind;
  /// The storage: the value whose buffer the accessed value takes.
  Value storage;
  int64_t bytes = 0;
  /// How many times the event happens per step (the trip counts of the
  /// loops around it).
  int64_t weight = 1;
};

/// The accesses of a step in the order it runs them. A loop with a static
/// trip count T > 1 is walked twice: its first iteration (weight 1), then
/// the steady state (weight T - 1), whose reads of values carried from the
/// previous iteration or defined before the loop see what one iteration
/// touches. A value takes the storage of the operand it is written into
/// (destination-passing style) or viewed from (a reshape, a slice), as
/// bufferization gives it; a storage dies when the last value that takes
/// it is dead, and a dead storage no longer occupies the cache (a buffer
/// of a dead value is reused, not more bytes touched).
class StepTrace {
public:
  SmallVector<Access> accesses;
  int64_t work = 0;

  void walkFunction(func::FuncOp func) {
    for (BlockArgument argument : func.getArguments())
      define(argument, argument);
    walkBlock(func.getBody().front(), 1);
  }

private:
  DenseMap<Value, Value> storageOf;
  /// Live values per storage.
  DenseMap<Value, int64_t> users;

  Value storage(Value value) { return storageOf.lookup(value); }

  void define(Value value, Value storage) {
    if (!getTensorBytes(value.getType()))
      return;
    storageOf[value] = storage;
    ++users[storage];
  }

  void release(Value value) {
    auto it = storageOf.find(value);
    if (it == storageOf.end())
      return;
    Value s = it->second;
    if (--users[s] == 0)
      accesses.push_back({Access::Kill, s, 0, 1});
  }

  void record(Access::Kind kind, Value value, int64_t weight) {
    if (Value s = storage(value))
      accesses.push_back({kind, s, getTensorBytes(value.getType()), weight});
  }

  /// The values of `block` (its arguments but a function's, its ops'
  /// results) by the op of `block` after which they are dead (nullptr: at
  /// its start); values the terminator reads live on, and so do a
  /// function's arguments (the step's storage).
  static DenseMap<Operation *, SmallVector<Value>> getDeaths(Block &block) {
    DenseMap<Operation *, SmallVector<Value>> deaths;
    Operation *terminator =
        block.mightHaveTerminator() ? block.getTerminator() : nullptr;
    auto visit = [&](Value value, Operation *definer) {
      Operation *last = definer;
      for (Operation *user : value.getUsers()) {
        Operation *ancestor = block.findAncestorOpInBlock(*user);
        if (ancestor && (!last || last->isBeforeInBlock(ancestor)))
          last = ancestor;
      }
      if (!last || last != terminator)
        deaths[last].push_back(value);
    };
    if (!isa<func::FuncOp>(block.getParentOp()))
      for (BlockArgument argument : block.getArguments())
        visit(argument, nullptr);
    for (Operation &op : block)
      for (Value result : op.getResults())
        visit(result, &op);
    return deaths;
  }

  void walkBlock(Block &block, int64_t weight) {
    DenseMap<Operation *, SmallVector<Value>> deaths = getDeaths(block);
    for (Value value : deaths.lookup(nullptr))
      release(value);
    for (Operation &op : block) {
      if (auto loop = dyn_cast<scf::ForOp>(op))
        walkLoop(loop, weight);
      else if (op.getNumRegions() && !isa<linalg::LinalgOp>(op))
        walkRegions(&op, weight);
      else
        walkLeaf(&op, weight);
      for (Value value : deaths.lookup(&op))
        release(value);
    }
  }

  void walkLoop(scf::ForOp loop, int64_t weight) {
    int64_t trips = 1;
    if (std::optional<APInt> count = loop.getStaticTripCount())
      trips = std::max<int64_t>(count->getSExtValue(), 1);
    Block &body = *loop.getBody();
    auto yielded = cast<scf::YieldOp>(body.getTerminator()).getOperands();
    for (auto [argument, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      define(argument, storage(init));
    walkBlock(body, weight);
    if (trips > 1) {
      // The carried values are the yielded ones (their users pass over).
      for (auto [argument, value] :
           llvm::zip(loop.getRegionIterArgs(), yielded))
        storageOf[argument] = storage(value);
      walkBlock(body, weight * (trips - 1));
    }
    for (auto [result, value] : llvm::zip(loop.getResults(), yielded))
      if (Value s = storage(value))
        storageOf[result] = s;
  }

  /// An op with regions other than a loop with a trip count (a branch, a
  /// loop of run-time trips): each region once.
  void walkRegions(Operation *op, int64_t weight) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        walkBlock(block, weight);
    for (Value result : op->getResults())
      define(result, result);
  }

  void walkLeaf(Operation *op, int64_t weight) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    int64_t opWork = linalgOp ? getOpWork(linalgOp) : getTensorOpWork(op);
    work += opWork * weight;
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (!linalgOp && !opWork && !dps) {
      // A view (a reshape, a cast) or an allocation: no access; the result
      // takes the storage of its first tensor operand, or its own. A view
      // of part of its source (a slice: of the batch, a micro-batch) is
      // storage of its own that no iteration has touched (its offsets move).
      Value source;
      for (Value operand : op->getOperands())
        if (!source && storage(operand))
          source = operand;
      for (Value result : op->getResults()) {
        bool whole = source && op->getNumResults() == 1 &&
                     getTensorBytes(result.getType()) ==
                         getTensorBytes(source.getType());
        define(result, whole ? storage(source) : result);
        if (!whole)
          accesses.push_back({Access::Kill, result, 0, weight});
      }
      return;
    }
    for (OpOperand &operand : op->getOpOperands()) {
      // An init is only written, unless a payload reads it.
      if (dps && dps.isDpsInit(&operand) &&
          !(linalgOp && linalgOp.payloadUsesValueFromOperand(&operand)))
        continue;
      record(Access::Read, operand.get(), weight);
    }
    for (OpResult result : op->getResults()) {
      Value s = result;
      if (dps && storage(dps.getTiedOpOperand(result)->get()))
        s = storage(dps.getTiedOpOperand(result)->get());
      define(result, s);
      record(Access::Write, result, weight);
    }
  }
};
} // namespace

/// Replays `accesses` through an LRU cache of `cacheBytes` over the live
/// storages: a read misses when the bytes of the live storages touched
/// since its storage was last touched, with its own, exceed the cache (or
/// it was never touched: the step's arguments come from memory). Returns
/// the bytes read on misses, weighed.
static int64_t replayCache(ArrayRef<Access> accesses, int64_t cacheBytes) {
  // The bytes of each storage at the time of its last touch, summed by a
  // Fenwick tree over time.
  SmallVector<int64_t> tree(accesses.size() + 1, 0);
  auto add = [&](size_t time, int64_t bytes) {
    for (++time; time < tree.size(); time += time & -time)
      tree[time] += bytes;
  };
  auto sumAfter = [&](size_t time) {
    int64_t total = 0;
    for (size_t i = tree.size() - 1; i; i -= i & -i)
      total += tree[i];
    for (size_t i = time + 1; i; i -= i & -i)
      total -= tree[i];
    return total;
  };
  DenseMap<Value, std::pair<size_t, int64_t>> lastTouch;
  int64_t moved = 0;
  for (auto [now, access] : llvm::enumerate(accesses)) {
    auto it = lastTouch.find(access.storage);
    bool resident = it != lastTouch.end();
    if (access.kind == Access::Read &&
        (!resident || sumAfter(it->second.first) + access.bytes > cacheBytes))
      moved += access.bytes * access.weight;
    if (resident) {
      add(it->second.first, -it->second.second);
      lastTouch.erase(it);
    }
    if (access.kind != Access::Kill) {
      add(now, access.bytes);
      lastTouch[access.storage] = {now, access.bytes};
    }
  }
  return moved;
}

int64_t mlir::ga::detail::getHostCacheBytes() {
#if defined(__linux__) && defined(_SC_LEVEL2_CACHE_SIZE)
  long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (bytes > 0)
    return bytes;
#endif
  return int64_t(1) << 20;
}

FailureOr<StepCost> mlir::ga::detail::estimateStepCost(
    ModuleOp module, func::FuncOp func, int64_t microBatches,
    StringRef accumulateOptions, int64_t cacheBytes) {
  PassManager pm(module.getContext());
  if (failed(addMicroBatchRewrite(pm, func, microBatches, accumulateOptions)))
    return failure();
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  if (failed(pm.run(*copy)))
    return failure();
  auto rewritten = copy->lookupSymbol<func::FuncOp>(func.getSymName());
  StepTrace trace;
  trace.walkFunction(rewritten);
  return StepCost{trace.work, replayCache(trace.accesses, cacheBytes)};
}
