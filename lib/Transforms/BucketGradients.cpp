//===- BucketGradients.cpp - one collective per bucket of gradients -------===//
//
// Coalesces the all-reduces that --ga-accumulate placed after a micro-batch
// loop into buckets. The loop carries one flat accumulator per bucket and
// every gradient of the bucket is accumulated in a view of it, so that after
// bufferization the bucket's collective runs on the accumulators themselves
// (no pack/unpack copy). See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ga/IR/GAOps.h"
#include "ga/Transforms/Passes.h"
#include "ga/Utils/FlatViews.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <deque>
#include <limits>

namespace mlir::ga {
#define GEN_PASS_DEF_BUCKETGRADIENTS
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// One collective of the function: a `ga.all_reduce` or a `shard.all_reduce`
/// on tensors.
struct Collective {
  Operation *op = nullptr;
  /// Collectives with equal keys may share a bucket (same op, reduction,
  /// element type, grid and axes).
  std::string key;
  /// Bytes of the reduced tensor (0 when not statically known).
  int64_t bytes = 0;
  /// The loop whose result it reduces (null otherwise), and the result.
  scf::ForOp loop;
  unsigned resultIndex = 0;
  /// In the loop body: the first op that uses the accumulator and the op
  /// that produces its final value (its "production" point).
  Operation *firstUse = nullptr;
  Operation *lastUpdate = nullptr;
  /// Whether it may be accumulated in a view of a shared buffer.
  bool canShare = false;
  /// Position among the function's collectives.
  unsigned order = 0;
};

/// The members of one bucket, in production order.
struct Bucket {
  SmallVector<Collective *> members;
  int64_t bytes = 0;
};

} // namespace

static Value getInput(Operation *op) { return op->getOperand(0); }

static bool isCollective(Operation *op) {
  if (isa<AllReduceOp>(op))
    return true;
  auto shardOp = dyn_cast<shard::AllReduceOp>(op);
  return shardOp && isa<RankedTensorType>(shardOp.getInput().getType()) &&
         shardOp.getInput().getType() == shardOp.getResult().getType() &&
         shardOp.getReduction() != shard::ReductionKind::Generic;
}

static std::string getKey(Operation *op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op->getName() << "|"
     << cast<RankedTensorType>(getInput(op).getType()).getElementType();
  if (auto gaOp = dyn_cast<AllReduceOp>(op)) {
    os << "|" << stringifyCollectiveKind(gaOp.getKind());
  } else {
    auto shardOp = cast<shard::AllReduceOp>(op);
    os << "|" << shardOp.getGrid() << "|"
       << shard::stringifyReductionKind(shardOp.getReduction()) << "|";
    llvm::interleaveComma(shardOp.getGridAxes(), os);
  }
  return key;
}

static int64_t getStaticBytes(RankedTensorType type) {
  unsigned bits = type.getElementType().isIntOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 0;
  if (!type.hasStaticShape() || bits == 0 || bits % 8 != 0)
    return 0;
  return type.getNumElements() * (bits / 8);
}

/// The splat value `init` is filled with, if it is a `linalg.fill` of a
/// constant.
static Attribute getFillConstant(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Attribute constant;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&constant)))
    return {};
  return constant;
}

namespace {

class Bucketer {
public:
  Bucketer(func::FuncOp func, int64_t bucketSize)
      : func(func), bucketSize(bucketSize) {}

  LogicalResult run();

  unsigned numBefore = 0, numBuckets = 0, numCoalesced = 0;
  uint64_t numBytes = 0;

private:
  void analyzeLoopResult(Collective &c);
  SmallVector<Bucket> formBuckets(scf::ForOp loop,
                                  SmallVectorImpl<Collective *> &members);
  void rewriteLoop(scf::ForOp loop, ArrayRef<Bucket> buckets);

  func::FuncOp func;
  int64_t bucketSize;
  std::deque<Collective> collectives;
};

} // namespace

/// Where accumulator `index` of `loop` lives in the body: from the first op
/// that uses its iteration argument to the op that produces its yielded
/// value. None when it is not updated in the body or is read after its
/// update.
static std::optional<std::pair<Operation *, Operation *>>
getLiveRange(scf::ForOp loop, unsigned index) {
  Block *body = loop.getBody();
  Operation *firstUse = nullptr;
  for (OpOperand &use : loop.getRegionIterArgs()[index].getUses()) {
    Operation *user = body->findAncestorOpInBlock(*use.getOwner());
    if (!user || user == body->getTerminator())
      return std::nullopt; // Yielded unchanged: nothing to share.
    if (!firstUse || user->isBeforeInBlock(firstUse))
      firstUse = user;
  }
  Operation *def = loop.getYieldedValues()[index].getDefiningOp();
  Operation *lastUpdate = def ? body->findAncestorOpInBlock(*def) : nullptr;
  if (!lastUpdate || (firstUse && lastUpdate->isBeforeInBlock(firstUse)))
    return std::nullopt;
  return std::make_pair(firstUse, lastUpdate);
}

/// Whether the accumulators `indices` of `loop` can be chained, in this
/// order, through one flat value: each live range ends before the next
/// starts.
static bool canChain(scf::ForOp loop, ArrayRef<unsigned> indices) {
  Operation *previousEnd = nullptr;
  for (unsigned index : indices) {
    auto range = getLiveRange(loop, index);
    if (!range)
      return false;
    if (previousEnd && range->first &&
        !previousEnd->isBeforeInBlock(range->first))
      return false;
    previousEnd = range->second;
  }
  return true;
}

void Bucketer::analyzeLoopResult(Collective &c) {
  auto result = dyn_cast<OpResult>(getInput(c.op));
  if (!result)
    return;
  auto loop = dyn_cast<scf::ForOp>(result.getOwner());
  if (!loop || loop->getBlock() != c.op->getBlock())
    return;
  c.loop = loop;
  c.resultIndex = result.getResultNumber();
  auto type = cast<RankedTensorType>(result.getType());
  if (!result.hasOneUse() || c.bytes == 0 ||
      type.getNumElements() > std::numeric_limits<int32_t>::max())
    return;
  auto range = getLiveRange(loop, c.resultIndex);
  if (!range)
    return;
  std::tie(c.firstUse, c.lastUpdate) = *range;
  c.canShare = true;
}

/// Greedy bucketing in production order: a gradient joins the open bucket of
/// its key when it fits and its live range in the body starts after the
/// previous member's ends (the views are chained through the flat value).
SmallVector<Bucket>
Bucketer::formBuckets(scf::ForOp loop, SmallVectorImpl<Collective *> &members) {
  // Production order: position of the last update in the body (collectives
  // that cannot share go last), then program order of the collectives.
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(loop.getBody()->getOperations()))
    position[&op] = i;
  auto producedAt = [&](Collective *c) -> std::pair<unsigned, unsigned> {
    unsigned at = c->lastUpdate ? position[c->lastUpdate] : ~0u;
    return {at, c->order};
  };
  llvm::sort(members, [&](Collective *a, Collective *b) {
    return producedAt(a) < producedAt(b);
  });
  SmallVector<Bucket> closed;
  llvm::MapVector<StringRef, Bucket> open;
  for (Collective *c : members) {
    if (!c->canShare) {
      closed.push_back(Bucket{{c}, c->bytes});
      continue;
    }
    auto it = open.find(c->key);
    if (it != open.end()) {
      Bucket &bucket = it->second;
      Collective *last = bucket.members.back();
      bool fits = bucket.bytes + c->bytes <= bucketSize;
      bool disjoint =
          !c->firstUse || last->lastUpdate->isBeforeInBlock(c->firstUse);
      if (fits && disjoint) {
        bucket.members.push_back(c);
        bucket.bytes += c->bytes;
        continue;
      }
      closed.push_back(std::move(bucket));
      open.erase(it);
    }
    open.insert({c->key, Bucket{{c}, c->bytes}});
  }
  for (auto &entry : open)
    closed.push_back(std::move(entry.second));
  // Launch order: when the bucket's last gradient is produced.
  llvm::sort(closed, [&](const Bucket &a, const Bucket &b) {
    return producedAt(a.members.back()) < producedAt(b.members.back());
  });
  return closed;
}

/// Erases the views of `flat` that nothing uses (after the loop that read
/// them is gone): even dead, a read of the flat value after a later in-place
/// update would make bufferization copy it.
static void eraseDeadViews(Value flat) {
  for (Operation *user : llvm::make_early_inc_range(flat.getUsers())) {
    if (!isa<tensor::ExtractSliceOp>(user))
      continue;
    for (Operation *reshape :
         llvm::make_early_inc_range(user->getResult(0).getUsers()))
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape) &&
          reshape->use_empty())
        reshape->erase();
    if (user->use_empty())
      user->erase();
  }
}

static scf::ForOp flattenLoop(scf::ForOp loop,
                              ArrayRef<SmallVector<unsigned>> layouts);

static RankedTensorType getResultType(scf::ForOp loop, unsigned index) {
  return cast<RankedTensorType>(loop.getResult(index).getType());
}

/// Layouts whose accumulators all come from one earlier loop are flattened
/// there first, with the same layout: their flat initial values, by
/// position in `layouts`, go into `flatInits`. Returns the positions
/// chained, by producer loop (the old producers are erased).
static llvm::MapVector<Operation *, SmallVector<unsigned>>
flattenChainedProducers(scf::ForOp loop,
                        ArrayRef<SmallVector<unsigned>> layouts,
                        MutableArrayRef<Value> flatInits) {
  llvm::MapVector<Operation *, SmallVector<unsigned>> chained;
  for (auto [position, layout] : llvm::enumerate(layouts)) {
    auto producer = loop.getInitArgs()[layout[0]].getDefiningOp<scf::ForOp>();
    bool chainable = producer && producer->getBlock() == loop->getBlock();
    SmallVector<unsigned> producerLayout;
    for (unsigned index : layout) {
      auto init = dyn_cast<OpResult>(loop.getInitArgs()[index]);
      chainable &= init && init.getOwner() == producer && init.hasOneUse();
      if (chainable)
        producerLayout.push_back(init.getResultNumber());
    }
    if (chainable && canChain(producer, producerLayout))
      chained[producer].push_back(position);
  }
  for (auto &[producerOp, positions] : chained) {
    auto producer = cast<scf::ForOp>(producerOp);
    SmallVector<SmallVector<unsigned>> producerLayouts;
    for (unsigned position : positions) {
      SmallVector<unsigned> producerLayout;
      for (unsigned index : layouts[position])
        producerLayout.push_back(
            cast<OpResult>(loop.getInitArgs()[index]).getResultNumber());
      producerLayouts.push_back(producerLayout);
    }
    scf::ForOp newProducer = flattenLoop(producer, producerLayouts);
    unsigned first = newProducer.getNumResults() - positions.size();
    for (auto [i, position] : llvm::enumerate(positions))
      flatInits[position] = newProducer.getResult(first + i);
  }
  return chained;
}

/// The flat initial value of `layout`'s accumulators of `loop`: a fill when
/// they all start from the same constant fill, else their inits packed once
/// before the loop.
static Value buildFlatInit(OpBuilder &b, scf::ForOp loop,
                           ArrayRef<unsigned> layout) {
  Location loc = loop.getLoc();
  int64_t total = 0;
  for (unsigned index : layout)
    total += getResultType(loop, index).getNumElements();
  Value empty =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{total},
                              getResultType(loop, layout[0]).getElementType());
  Attribute splat = getFillConstant(loop.getInitArgs()[layout[0]]);
  for (unsigned index : layout)
    if (getFillConstant(loop.getInitArgs()[index]) != splat)
      splat = {};
  if (splat) {
    Value scalar = arith::ConstantOp::create(b, loc, cast<TypedAttr>(splat));
    return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
  }
  Value flat = empty;
  int64_t offset = 0;
  for (unsigned index : layout) {
    flat = insertFlatView(b, loc, loop.getInitArgs()[index], flat, offset);
    offset += getResultType(loop, index).getNumElements();
  }
  return flat;
}

/// Moves `loop`'s body into `newLoop` (which carries `kept` results of
/// `loop`, then one flat value per layout): each accumulator of a layout is
/// read as a view of the flat value over its live range `ranges` and its
/// new value inserted into it, chained through the flat value.
static void moveBodyOntoFlatValues(
    scf::ForOp loop, scf::ForOp newLoop, ArrayRef<unsigned> kept,
    ArrayRef<SmallVector<unsigned>> layouts,
    ArrayRef<SmallVector<std::pair<Operation *, Operation *>>> ranges) {
  Location loc = loop.getLoc();
  OpBuilder b(newLoop);
  Block *newBody = newLoop.getBody();
  if (!newBody->empty())
    newBody->getTerminator()->erase();
  newBody->getOperations().splice(newBody->end(),
                                  loop.getBody()->getOperations());
  loop.getInductionVar().replaceAllUsesWith(newLoop.getInductionVar());
  for (auto [position, index] : llvm::enumerate(kept))
    loop.getRegionIterArgs()[index].replaceAllUsesWith(
        newLoop.getRegionIterArgs()[position]);
  auto yield = cast<scf::YieldOp>(newBody->getTerminator());
  SmallVector<Value> yields;
  for (unsigned index : kept)
    yields.push_back(yield.getOperand(index));
  for (auto [position, layout] : llvm::enumerate(layouts)) {
    Value flat = newLoop.getRegionIterArgs()[kept.size() + position];
    int64_t offset = 0;
    for (auto [index, range] : llvm::zip(layout, ranges[position])) {
      RankedTensorType type = getResultType(loop, index);
      BlockArgument oldArg = loop.getRegionIterArgs()[index];
      if (range.first) {
        b.setInsertionPoint(range.first);
        oldArg.replaceAllUsesWith(extractFlatView(b, loc, flat, offset, type));
      }
      b.setInsertionPointAfter(range.second);
      flat = insertFlatView(b, loc, yield.getOperand(index), flat, offset);
      offset += type.getNumElements();
    }
    yields.push_back(flat);
  }
  b.setInsertionPoint(yield);
  scf::YieldOp::create(b, yield.getLoc(), yields);
  yield.erase();
}

/// Erases the ops of `worklist` (initial values that only an erased loop
/// used: fills of empty tensors) and their producers that became dead.
/// Several inits may share producers: an op is erased once, and never
/// looked at after (a Value of an erased op would dangle).
static void eraseDeadInits(SmallVector<Operation *> worklist) {
  DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val();
    if (erased.contains(def) || !isOpTriviallyDead(def))
      continue;
    for (Value operand : def->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
    erased.insert(def);
    def->erase();
  }
}

/// Replaces `loop` by one that carries one flat accumulator per entry of
/// `layouts` (the loop's result indices whose accumulators it holds, in
/// order); the flat results follow the other results. Each accumulator is
/// updated in a view of the flat value. The flat initial value is a fill
/// when all accumulators start from the same constant fill, the flat result
/// of a preceding loop when they are all carried over from one (the
/// remainder segment of a micro-batch rewrite), else the packed inits.
static scf::ForOp flattenLoop(scf::ForOp loop,
                              ArrayRef<SmallVector<unsigned>> layouts) {
  Location loc = loop.getLoc();
  DenseSet<unsigned> shared;
  for (ArrayRef<unsigned> layout : layouts)
    shared.insert(layout.begin(), layout.end());
  SmallVector<unsigned> kept;
  for (unsigned index = 0, e = loop.getNumResults(); index < e; ++index)
    if (!shared.count(index))
      kept.push_back(index);

  SmallVector<Value> flatInits(layouts.size());
  llvm::MapVector<Operation *, SmallVector<unsigned>> chained =
      flattenChainedProducers(loop, layouts, flatInits);
  OpBuilder b(loop);
  SmallVector<Value> inits;
  for (unsigned index : kept)
    inits.push_back(loop.getInitArgs()[index]);
  for (auto [position, layout] : llvm::enumerate(layouts))
    inits.push_back(flatInits[position] ? flatInits[position]
                                        : buildFlatInit(b, loop, layout));

  // Live ranges, before the body moves.
  SmallVector<SmallVector<std::pair<Operation *, Operation *>>> ranges;
  for (ArrayRef<unsigned> layout : layouts) {
    ranges.emplace_back();
    for (unsigned index : layout)
      ranges.back().push_back(*getLiveRange(loop, index));
  }
  auto newLoop =
      scf::ForOp::create(b, loc, loop.getLowerBound(), loop.getUpperBound(),
                         loop.getStep(), inits);
  newLoop->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  moveBodyOntoFlatValues(loop, newLoop, kept, layouts, ranges);

  // Results: kept ones are forwarded; the flattened ones had a single use,
  // which the caller replaces.
  for (auto [position, index] : llvm::enumerate(kept))
    loop.getResult(index).replaceAllUsesWith(newLoop.getResult(position));
  b.setInsertionPointAfter(newLoop);
  for (auto [position, layout] : llvm::enumerate(layouts)) {
    Value flat = newLoop.getResult(kept.size() + position);
    int64_t offset = 0;
    for (unsigned index : layout) {
      RankedTensorType type = getResultType(loop, index);
      loop.getResult(index).replaceAllUsesWith(
          extractFlatView(b, loc, flat, offset, type));
      offset += type.getNumElements();
    }
  }
  SmallVector<Operation *> worklist;
  for (ArrayRef<unsigned> layout : layouts)
    for (unsigned index : layout)
      if (Operation *def = loop.getInitArgs()[index].getDefiningOp())
        worklist.push_back(def);
  loop.erase();
  eraseDeadInits(std::move(worklist));
  for (auto &entry : chained)
    for (unsigned position : entry.second)
      eraseDeadViews(flatInits[position]);
  return newLoop;
}

/// Flattens the shared buckets of `loop` and launches every bucket's
/// collective right after it, in launch order.
void Bucketer::rewriteLoop(scf::ForOp loop, ArrayRef<Bucket> buckets) {
  SmallVector<SmallVector<unsigned>> layouts;
  for (const Bucket &bucket : buckets) {
    if (bucket.members.size() < 2)
      continue;
    layouts.emplace_back();
    for (Collective *c : bucket.members)
      layouts.back().push_back(c->resultIndex);
  }
  scf::ForOp newLoop = flattenLoop(loop, layouts);
  unsigned flatPosition = newLoop.getNumResults() - layouts.size();

  // flattenLoop left views of the unreduced flat results after the loop,
  // which the member collectives reduce; they die with them.
  SmallVector<Operation *> deadViews;
  OpBuilder b(newLoop->getContext());
  b.setInsertionPointAfter(newLoop);
  for (const Bucket &bucket : buckets) {
    if (bucket.members.size() == 1) {
      bucket.members[0]->op->moveBefore(b.getInsertionBlock(),
                                        b.getInsertionPoint());
      continue;
    }
    Value flat = newLoop.getResult(flatPosition++);
    Operation *collective = b.clone(*bucket.members[0]->op);
    collective->setOperand(0, flat);
    collective->getResult(0).setType(flat.getType());
    Value reduced = collective->getResult(0);
    int64_t offset = 0;
    for (Collective *c : bucket.members) {
      auto type = cast<RankedTensorType>(c->op->getResult(0).getType());
      Value unreduced = getInput(c->op);
      c->op->getResult(0).replaceAllUsesWith(
          extractFlatView(b, c->op->getLoc(), reduced, offset, type));
      offset += type.getNumElements();
      c->op->erase();
      c->op = collective;
      for (Operation *def = unreduced.getDefiningOp();
           def && def != newLoop.getOperation();
           def = def->getOperand(0).getDefiningOp())
        deadViews.push_back(def);
      ++numCoalesced;
    }
  }
  for (Operation *view : deadViews)
    view->erase();
}

LogicalResult Bucketer::run() {
  Block &body = func.getBody().front();
  // A collective nested in a loop runs once per iteration.
  WalkResult nested = func.walk([&](Operation *op) {
    if (!isCollective(op) || op->getBlock() == &body)
      return WalkResult::advance();
    InFlightDiagnostic diag =
        op->emitError() << "collective inside a loop body runs once per "
                           "iteration: bucketing expects the deferred form, "
                           "one collective per gradient after the "
                           "micro-batch loop";
    if (Operation *loop = op->getParentOfType<LoopLikeOpInterface>())
      diag.attachNote(loop->getLoc()) << "inside this loop";
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();

  llvm::MapVector<Operation *, SmallVector<Collective *>> byLoop;
  for (Operation &op : body) {
    if (!isCollective(&op))
      continue;
    Collective &c = collectives.emplace_back();
    c.op = &op;
    c.order = collectives.size() - 1;
    c.key = getKey(&op);
    c.bytes = getStaticBytes(cast<RankedTensorType>(getInput(&op).getType()));
    analyzeLoopResult(c);
    if (c.loop)
      byLoop[c.loop].push_back(&c);
  }
  numBefore = collectives.size();

  for (auto &[loopOp, members] : byLoop) {
    auto loop = cast<scf::ForOp>(loopOp);
    SmallVector<Bucket> buckets = formBuckets(loop, members);
    bool anyShared = llvm::any_of(
        buckets, [](const Bucket &b) { return b.members.size() > 1; });
    if (anyShared) {
      rewriteLoop(loop, buckets);
      continue;
    }
    // Nothing to share: only launch the collectives in production order.
    Operation *insertAfter = loop;
    for (const Bucket &bucket : buckets) {
      bucket.members[0]->op->moveAfter(insertAfter);
      insertAfter = bucket.members[0]->op;
    }
  }

  // Number the collectives in launch order.
  int64_t id = 0;
  Builder b(func.getContext());
  for (Operation &op : body) {
    if (!isCollective(&op))
      continue;
    IntegerAttr bucket = b.getI64IntegerAttr(id++);
    if (auto gaOp = dyn_cast<AllReduceOp>(&op))
      gaOp.setBucketAttr(bucket);
    else
      op.setAttr("ga.bucket", bucket);
    numBytes +=
        getStaticBytes(cast<RankedTensorType>(op.getResult(0).getType()));
  }
  numBuckets = id;
  return success();
}

namespace {
struct BucketGradientsPass
    : public ga::impl::BucketGradientsBase<BucketGradientsPass> {
  using BucketGradientsBase::BucketGradientsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (bucketSize <= 0) {
      func.emitError() << "ga-bucket-gradients: bucket-size must be a "
                          "positive number of bytes, got "
                       << static_cast<int64_t>(bucketSize);
      return signalPassFailure();
    }
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Bucketer bucketer(func, bucketSize);
    if (failed(bucketer.run()))
      return signalPassFailure();
    numCollectivesBefore += bucketer.numBefore;
    numBuckets += bucketer.numBuckets;
    numCoalesced += bucketer.numCoalesced;
    numBytes += bucketer.numBytes;
  }
};
} // namespace
