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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
/// How a template's micro-batch loop is walked as the loops of N
/// micro-batches (StepCostModel): its body with micro-batch sizes and trips,
/// the values and ops whose bytes and work are per sample (times the size).
struct TraceScaling {
  const SmallPtrSetImpl<Operation *> &loops;
  SmallVector<std::pair<int64_t, int64_t>> segments;
  const DenseMap<Value, int64_t> &sampleBytes;
  const DenseMap<Operation *, int64_t> &sampleWork;
};

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

  /// Without `scaling`, the step as it is; with it, its micro-batch loop is
  /// walked as the loops of `scaling->segments` (StepCostModel).
  explicit StepTrace(const TraceScaling *scaling = nullptr)
      : scaling(scaling), size(scaling ? scaling->segments.front().first : 0) {}

  void walkFunction(func::FuncOp func) {
    for (BlockArgument argument : func.getArguments())
      define(argument, argument);
    walkBlock(func.getBody().front(), 1);
  }

private:
  const TraceScaling *scaling;
  /// The micro-batch size of the segment being walked (with `scaling`; the
  /// first one's before the loop).
  int64_t size;
  DenseMap<Value, Value> storageOf;
  /// Live values per storage.
  DenseMap<Value, int64_t> users;

  Value storage(Value value) { return storageOf.lookup(value); }

  /// The bytes of `value` in the segment being walked.
  int64_t bytes(Value value) const {
    if (scaling)
      if (auto it = scaling->sampleBytes.find(value);
          it != scaling->sampleBytes.end())
        return it->second * size;
    return getTensorBytes(value.getType());
  }

  void define(Value value, Value storage) {
    if (!bytes(value))
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
      accesses.push_back({kind, s, bytes(value), weight});
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
      if (scaling && scaling->loops.contains(&op))
        walkSegments(cast<scf::ForOp>(op), weight);
      else if (auto loop = dyn_cast<scf::ForOp>(op))
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

  /// The micro-batch loop of a template walked as the loops that N
  /// micro-batches run: each segment's first trip, then its steady state,
  /// the carried values passing from one segment to the next as from one
  /// trip to the next (the rewrite chains its loops so).
  void walkSegments(scf::ForOp loop, int64_t weight) {
    Block &body = *loop.getBody();
    auto yielded = cast<scf::YieldOp>(body.getTerminator()).getOperands();
    for (auto [argument, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      define(argument, storage(init));
    bool first = true;
    for (auto [segmentSize, trips] : scaling->segments) {
      size = segmentSize;
      for (int64_t pass = 0; pass < std::min<int64_t>(trips, 2); ++pass) {
        if (!first)
          for (auto [argument, value] :
               llvm::zip(loop.getRegionIterArgs(), yielded))
            storageOf[argument] = storage(value);
        first = false;
        walkBlock(body, pass ? weight * (trips - 1) : weight);
      }
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
    if (scaling)
      if (auto it = scaling->sampleWork.find(op);
          it != scaling->sampleWork.end())
        opWork = it->second * size;
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
                     bytes(result) == bytes(source);
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

/// A copy of `module` whose `func` is rewritten by --ga-accumulate with
/// `microBatches` micro-batches and the options `accumulateOptions`.
static FailureOr<OwningOpRef<ModuleOp>>
rewriteCopy(ModuleOp module, func::FuncOp func, int64_t microBatches,
            StringRef accumulateOptions) {
  PassManager pm(module.getContext());
  if (failed(addMicroBatchRewrite(pm, func, microBatches, accumulateOptions)))
    return failure();
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  if (failed(pm.run(*copy)))
    return failure();
  return copy;
}

FailureOr<StepCost> mlir::ga::detail::estimateStepCost(
    ModuleOp module, func::FuncOp func, int64_t microBatches,
    StringRef accumulateOptions, int64_t cacheBytes) {
  FailureOr<OwningOpRef<ModuleOp>> copy =
      rewriteCopy(module, func, microBatches, accumulateOptions);
  if (failed(copy))
    return failure();
  StepTrace trace;
  trace.walkFunction((**copy).lookupSymbol<func::FuncOp>(func.getSymName()));
  return StepCost{trace.work, replayCache(trace.accesses, cacheBytes)};
}

/// The work StepTrace counts for `op`.
static int64_t getWork(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp ? getOpWork(linalgOp) : getTensorOpWork(op);
}

/// The ops of `func` whose order the two rewrites of a StepCostModel are
/// compared by: those with tensor operands or results, or with regions
/// (the index arithmetic folds differently with the trip counts).
static SmallVector<Operation *> getTensorOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  auto isTensor = [](Value value) { return isa<TensorType>(value.getType()); };
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != func &&
        (op->getNumRegions() || llvm::any_of(op->getOperands(), isTensor) ||
         llvm::any_of(op->getResults(), isTensor)))
      ops.push_back(op);
  });
  return ops;
}

FailureOr<std::unique_ptr<StepCostModel>>
StepCostModel::build(ModuleOp module, func::FuncOp func, int64_t batchSize,
                     StringRef accumulateOptions) {
  FailureOr<OwningOpRef<ModuleOp>> whole =
      rewriteCopy(module, func, 1, accumulateOptions);
  if (failed(whole))
    return failure();
  std::unique_ptr<StepCostModel> model(new StepCostModel());
  model->batchSize = batchSize;
  model->rewritten = std::move(*whole);
  model->step = model->rewritten->lookupSymbol<func::FuncOp>(func.getSymName());
  if (batchSize < 2)
    return model;
  FailureOr<OwningOpRef<ModuleOp>> single;
  {
    // A set that N = B does not rewrite is weighed N by N.
    ScopedDiagnosticHandler silence(module.getContext(),
                                    [](Diagnostic &) { return success(); });
    single = rewriteCopy(module, func, batchSize, accumulateOptions);
  }
  if (failed(single) ||
      !model->match((**single).lookupSymbol<func::FuncOp>(func.getSymName())))
    return std::unique_ptr<StepCostModel>();
  return model;
}

/// Finds the micro-batch loops of `step` (the rewrite with N = 1; a data-only
/// statistic has a loop of its own before the main one) against `single`
/// (the rewrite with N = B), their ops on tensors in order: the loops whose
/// trip counts differ, one trip against B, directly in the step; false when
/// there is none or the ops differ otherwise.
static bool findMicroBatchLoops(func::FuncOp step, ArrayRef<Operation *> ours,
                                ArrayRef<Operation *> theirs, int64_t batchSize,
                                SmallPtrSetImpl<Operation *> &loops) {
  if (ours.size() != theirs.size())
    return false;
  for (auto [op, other] : llvm::zip(ours, theirs)) {
    if (op->getName() != other->getName() ||
        op->getNumResults() != other->getNumResults() ||
        op->getNumRegions() != other->getNumRegions())
      return false;
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (!forOp)
      continue;
    std::optional<APInt> trips = forOp.getStaticTripCount(),
                         otherTrips =
                             cast<scf::ForOp>(other).getStaticTripCount();
    if (!trips || !otherTrips)
      return false;
    if (*trips == *otherTrips)
      continue;
    if (!trips->isOne() || otherTrips->getSExtValue() != batchSize ||
        op->getParentOp() != step)
      return false;
    loops.insert(op);
  }
  return !loops.empty();
}

bool StepCostModel::match(func::FuncOp single) {
  SmallVector<Operation *> ours = getTensorOps(step),
                           theirs = getTensorOps(single);
  if (!findMicroBatchLoops(step, ours, theirs, batchSize, loops))
    return false;
  // A value or op of the template is per sample when it is B times that of
  // N = B inside the micro-batch loop, or an allocation hoisted out of it
  // (not an access: only whether it has bytes matters); it is the same
  // otherwise.
  auto inLoop = [&](Region *region) {
    return llvm::any_of(loops, [&](Operation *loop) {
      return loop->getRegion(0).isAncestor(region);
    });
  };
  auto perSample = [&](Region *region, int64_t whole, int64_t one, auto &table,
                       auto key, bool allocation) {
    if (whole == one)
      return true;
    if (whole != batchSize * one || !(allocation || inLoop(region)))
      return false;
    table[key] = one;
    return true;
  };
  auto matchValues = [&](ValueRange a, ValueRange b) {
    if (a.size() != b.size())
      return false;
    for (auto [value, other] : llvm::zip(a, b))
      if (!perSample(value.getParentRegion(), getTensorBytes(value.getType()),
                     getTensorBytes(other.getType()), sampleBytes, value,
                     isa_and_nonnull<tensor::EmptyOp>(value.getDefiningOp())))
        return false;
    return true;
  };
  for (auto [op, other] : llvm::zip(ours, theirs)) {
    if (!matchValues(op->getResults(), other->getResults()) ||
        !perSample(op->getParentRegion(), getWork(op), getWork(other),
                   sampleWork, op, false))
      return false;
    for (auto [region, otherRegion] :
         llvm::zip(op->getRegions(), other->getRegions())) {
      if (region.getBlocks().size() != otherRegion.getBlocks().size())
        return false;
      for (auto [block, otherBlock] : llvm::zip(region, otherRegion))
        if (!matchValues(block.getArguments(), otherBlock.getArguments()))
          return false;
    }
  }
  return true;
}

StepCost StepCostModel::getCost(int64_t microBatches,
                                int64_t cacheBytes) const {
  // The rewrite's loops: B mod N micro-batches of ceil(B / N) samples,
  // then the others of floor(B / N).
  TraceScaling scaling{loops, {}, sampleBytes, sampleWork};
  int64_t larger = batchSize % microBatches;
  if (larger)
    scaling.segments.push_back(
        {llvm::divideCeil(batchSize, microBatches), larger});
  scaling.segments.push_back({batchSize / microBatches, microBatches - larger});
  StepTrace trace(loops.empty() ? nullptr : &scaling);
  trace.walkFunction(step);
  return StepCost{trace.work, replayCache(trace.accesses, cacheBytes)};
}
