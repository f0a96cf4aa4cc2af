//===- ShareBuffers.cpp - one buffer for disjoint live ranges -------------===//
//
// --ga-share-buffers: temporaries of one element type and size whose live
// ranges do not overlap get one allocation. After the hoisting of allocations
// out of the micro-batch loop, this is what lets a value recomputed in the
// backward reuse the storage of values dead by then, and the loop's temporaries
// the storage of the peeled first micro-batch's (--ga-peel-first-accumulation),
// which are all dead before the loop starts.
//
// Invariant: a buffer is only reused by ops that write every element of it
// before reading any (one op that overwrites all of it, or ops that write
// disjoint parts of it, such as the pieces of a concatenation), placed after
// the last access to the buffer it reuses; a candidate's contents never
// outlive one execution of the block that holds its accesses. The results
// are bitwise those without the pass.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "ga/Analysis/MemoryUsage.h"
#include "ga/IR/GAShardOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/MapVector.h"

#include <deque>
#include <numeric>

namespace mlir::ga {
#define GEN_PASS_DEF_SHAREBUFFERS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
/// A candidate allocation and its live range in the function's pre-order
/// numbering of ops: from the op of its block that writes it first to the
/// last op nested in the op of its block that accesses it last. Its
/// contents never outlive one execution of its block, so two candidates
/// whose ranges are disjoint are never live at once, whichever blocks hold
/// them: a range either holds all of an op of another candidate's block (a
/// loop that holds the other) or none of it.
struct LiveRange {
  memref::AllocOp alloc;
  unsigned first = 0, last = 0;
};

/// Pre-order positions of the ops of a function, and for each op the
/// position of the last op nested in it (itself when it has no regions).
struct OpOrder {
  DenseMap<Operation *, unsigned> position, subtreeEnd;

  explicit OpOrder(func::FuncOp func) {
    unsigned next = 0;
    func.walk<WalkOrder::PreOrder>(
        [&](Operation *op) { position[op] = next++; });
    func.walk<WalkOrder::PostOrder>([&](Operation *op) {
      unsigned end = position.lookup(op);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (!block.empty())
            end = std::max(end, subtreeEnd.lookup(&block.back()));
      subtreeEnd[op] = end;
    });
  }
};
} // namespace

/// Whether `view` is `buffer` or a reshape of all of it.
static bool isWholeView(Value view, Value buffer) {
  while (view != buffer) {
    Operation *def = view.getDefiningOp();
    if (!isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp,
                         memref::CastOp>(def))
      return false;
    view = def->getOperand(0);
  }
  return true;
}

/// Whether `op`, the first access to `buffer`, writes every element of it
/// without reading it.
static bool overwritesWhole(Operation *op, Value buffer) {
  // A host all-gather: this rank's rows from its input, the others' from
  // the engine.
  if (auto start = dyn_cast<ga::HostCollectiveStartOp>(op))
    return start.getInput() && start.getInput() != buffer &&
           isWholeView(start.getBuffer(), buffer);
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getDpsInits()[0] == buffer;
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getTarget() == buffer && copy.getSource() != buffer;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics())
    return false;
  if (llvm::any_of(linalgOp.getDpsInputOperands(),
                   [&](OpOperand *input) { return input->get() == buffer; }))
    return false;
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    if (init.get() == buffer)
      return !linalgOp.payloadUsesValueFromOperand(&init) &&
             linalgOp.getMatchingIndexingMap(&init).isPermutation();
  return false;
}

/// The accesses to the buffer of `alloc` (the operands that hold it or a
/// view of it), or failure when one may let it escape or touch it in a way
/// not declared.
static FailureOr<SmallVector<OpOperand *>> getAccesses(memref::AllocOp alloc) {
  SmallVector<OpOperand *> accesses;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      // An access declares its effects, keeps the buffer (no memref or
      // tensor results that could alias it, no pointer taken), and is not a
      // terminator (which would hand it on).
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects || user->hasTrait<OpTrait::IsTerminator>() ||
          effects.hasEffect<MemoryEffects::Free>() ||
          isa<memref::ExtractAlignedPointerAsIndexOp>(user) ||
          llvm::any_of(user->getResultTypes(), [](Type type) {
            return isa<BaseMemRefType, TensorType>(type);
          }))
        return failure();
      accesses.push_back(&use);
    }
  }
  return accesses;
}

namespace {
/// The part of a buffer that a view of it covers: the offsets and sizes of
/// a subview with static offsets and sizes and unit strides.
struct Box {
  SmallVector<int64_t> offsets, sizes;

  int64_t volume() const {
    return std::accumulate(sizes.begin(), sizes.end(), int64_t{1},
                           std::multiplies<int64_t>());
  }
  bool overlaps(const Box &other) const {
    for (auto [a, n, b, m] :
         llvm::zip_equal(offsets, sizes, other.offsets, other.sizes))
      if (a + n <= b || b + m <= a)
        return false;
    return true;
  }
  bool contains(const Box &other) const {
    for (auto [a, n, b, m] :
         llvm::zip_equal(offsets, sizes, other.offsets, other.sizes))
      if (b < a || b + m > a + n)
        return false;
    return true;
  }
};
} // namespace

/// The box of the buffer `alloc` that `view` covers: all of it (itself or a
/// reshape of all of it), or a subview of it with static offsets and sizes
/// and unit strides; none for any other view.
static std::optional<Box> getBox(Value view, memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (isWholeView(view, alloc.getResult()))
    return Box{SmallVector<int64_t>(type.getRank(), 0),
               llvm::to_vector(type.getShape())};
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview || subview.getSource() != alloc.getResult() ||
      ShapedType::isDynamicShape(subview.getStaticOffsets()) ||
      ShapedType::isDynamicShape(subview.getStaticSizes()) ||
      llvm::any_of(subview.getStaticStrides(),
                   [](int64_t stride) { return stride != 1; }))
    return std::nullopt;
  return Box{llvm::to_vector(subview.getStaticOffsets()),
             llvm::to_vector(subview.getStaticSizes())};
}

/// Whether the accesses to `alloc`, in the order they run, write every
/// element of it before they read any: ops of `block` that each overwrite
/// one box of it (overwritesWhole of the view, their only access to it),
/// pairwise disjoint, until the boxes cover it, and between them only ops
/// of `block` that access boxes written before (a reduction into its
/// piece, a read of a finished piece). The pieces of a concatenation, each
/// copied into its subview, are written so; one op that overwrites all of
/// the buffer is the case of one box.
static bool writesBeforeReading(memref::AllocOp alloc,
                                ArrayRef<OpOperand *> accesses, Block *block,
                                const OpOrder &order) {
  // The accesses of each op, the ops in the order they run.
  llvm::MapVector<Operation *, SmallVector<Value>> byOp;
  for (OpOperand *access : accesses)
    byOp[access->getOwner()].push_back(access->get());
  SmallVector<Operation *> ops = llvm::to_vector(llvm::make_first_range(byOp));
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return order.position.lookup(a) < order.position.lookup(b);
  });
  SmallVector<Box> written;
  int64_t covered = 0, total = alloc.getType().getNumElements();
  for (Operation *op : ops) {
    if (op->getBlock() != block)
      return false;
    SmallVector<Box> boxes;
    for (Value view : byOp[op]) {
      std::optional<Box> box = getBox(view, alloc);
      if (!box)
        return false;
      boxes.push_back(std::move(*box));
    }
    if (boxes.size() == 1 && overwritesWhole(op, byOp[op].front()) &&
        llvm::none_of(written,
                      [&](const Box &box) { return box.overlaps(boxes[0]); })) {
      covered += boxes[0].volume();
      written.push_back(std::move(boxes[0]));
      if (covered == total)
        return true;
      continue;
    }
    for (const Box &box : boxes)
      if (llvm::none_of(written,
                        [&](const Box &done) { return done.contains(box); }))
        return false;
  }
  return false;
}

/// The live range of `alloc` when it is a candidate.
static std::optional<LiveRange> getLiveRange(memref::AllocOp alloc,
                                             const OpOrder &order) {
  if (!alloc.getType().hasStaticShape() || !alloc.getDynamicSizes().empty())
    return std::nullopt;
  FailureOr<SmallVector<OpOperand *>> accesses = getAccesses(alloc);
  if (failed(accesses) || accesses->empty())
    return std::nullopt;
  // The innermost block that holds every access.
  Block *block = (*accesses)[0]->getOwner()->getBlock();
  auto holds = [&](Block *candidate) {
    return llvm::all_of(*accesses, [&](OpOperand *access) {
      return candidate->findAncestorOpInBlock(*access->getOwner()) != nullptr;
    });
  };
  while (block && !holds(block)) {
    Operation *parent = block->getParentOp();
    block = parent ? parent->getBlock() : nullptr;
  }
  if (!block)
    return std::nullopt;
  LiveRange range{alloc, ~0u, 0};
  for (OpOperand *access : *accesses) {
    Operation *ancestor = block->findAncestorOpInBlock(*access->getOwner());
    range.first = std::min(range.first, order.position.lookup(ancestor));
    range.last = std::max(range.last, order.subtreeEnd.lookup(ancestor));
  }
  if (!writesBeforeReading(alloc, *accesses, block, order))
    return std::nullopt;
  return range;
}

/// Whether the allocation `shared` dominates `alloc`, or can be moved
/// before it: both in one block, `shared` without operands.
static bool dominatesOrCanMove(DominanceInfo &dominance, memref::AllocOp shared,
                               memref::AllocOp alloc) {
  return dominance.properlyDominates(shared.getOperation(),
                                     alloc.getOperation()) ||
         (shared->getBlock() == alloc->getBlock() &&
          shared->getNumOperands() == 0);
}

/// The innermost op around `op` whose region may run several times at once
/// (a parallel loop), or null.
static Operation *getParallelAncestor(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<scf::ForallOp, scf::ParallelOp>(parent) ||
        parent->getName().getDialectNamespace() == "omp")
      return parent;
  return nullptr;
}

/// What candidates must have in common to share a buffer: an identity
/// layout of rank >= 1 needs only the element type, the number of elements
/// and the memory space (a reshape of the shared buffer gives its shape);
/// any other type the whole type. And the same innermost parallel loop
/// around the allocation: one allocated in a parallel loop's body is one
/// buffer per iteration, which must not become a buffer that iterations
/// running at once would share.
using StorageKey = std::tuple<Type, int64_t, Attribute, Operation *>;
static StorageKey getStorageKey(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  Operation *parallel = getParallelAncestor(alloc);
  if (type.getRank() == 0 || !type.getLayout().isIdentity())
    return {type, -1, Attribute(), parallel};
  return {type.getElementType(), type.getNumElements(), type.getMemorySpace(),
          parallel};
}

/// The buffer of `shared` in the shape of `alloc` (same storage key), built
/// before `alloc`: itself, or the reshape of all of it (collapsed to one
/// dimension, then expanded), a view the accesses and the memory report
/// follow to `shared`.
static Value reshapeTo(memref::AllocOp shared, memref::AllocOp alloc) {
  MemRefType from = shared.getType(), to = alloc.getType();
  if (from == to)
    return shared.getResult();
  OpBuilder builder(alloc);
  Location loc = alloc.getLoc();
  Value flat = shared.getResult();
  if (from.getRank() != 1) {
    ReassociationIndices all(from.getRank());
    std::iota(all.begin(), all.end(), 0);
    flat = memref::CollapseShapeOp::create(builder, loc, flat,
                                           ArrayRef<ReassociationIndices>{all});
  }
  if (to.getRank() == 1)
    return flat;
  ReassociationIndices all(to.getRank());
  std::iota(all.begin(), all.end(), 0);
  return memref::ExpandShapeOp::create(builder, loc, to.getShape(), flat,
                                       ArrayRef<ReassociationIndices>{all});
}

namespace {
/// A buffer after the sharing by storage key: its allocation and the live
/// ranges of the candidates it holds, in order, each after the last.
struct Slot {
  memref::AllocOp alloc;
  SmallVector<std::pair<unsigned, unsigned>> ranges;
  int64_t bytes = 0, offset = 0;
  /// The candidate it stands for, whose allocation packing clears.
  LiveRange *origin = nullptr;
};
} // namespace

/// Whether two slots are live at once.
static bool overlap(const Slot &a, const Slot &b) {
  for (auto [aFirst, aLast] : a.ranges)
    for (auto [bFirst, bLast] : b.ranges)
      if (aFirst <= bLast && bFirst <= aLast)
        return true;
  return false;
}

/// Bytes of a slot that can take a byte offset of an arena: an identity
/// layout of rank >= 1, of integers or floats of whole bytes, allocated
/// without operands outside any parallel loop; failure otherwise.
static FailureOr<int64_t> getPackableBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  Type element = type.getElementType();
  if (alloc->getNumOperands() != 0 || type.getRank() == 0 ||
      !type.getLayout().isIdentity() || !element.isIntOrFloat() ||
      element.getIntOrFloatBitWidth() % 8 != 0 || getParallelAncestor(alloc))
    return failure();
  return type.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
}

/// What the memory report tells apart in a slot, which an arena must not
/// mix (it gives an allocation one role from all its uses): whether a
/// recomputation (`ga.recomputed`) writes it, and how many loops of the
/// function's entry block precede its last access there (`segments`: of
/// each op of the entry block). An arena of one such class is never used
/// in a loop and after it, as an accumulator is; a slot that is (an
/// accumulator itself) is not packed: failure.
static FailureOr<std::pair<bool, unsigned>>
getReportClass(memref::AllocOp alloc,
               const DenseMap<Operation *, unsigned> &segments, Block &entry) {
  FailureOr<SmallVector<OpOperand *>> accesses = getAccesses(alloc);
  if (failed(accesses))
    return failure();
  bool recomputed = false;
  Operation *last = nullptr;
  SmallVector<Operation *> anchors;
  for (OpOperand *access : *accesses) {
    Operation *op = access->getOwner();
    recomputed |= op->hasAttr(kRecomputedAttrName);
    if (Operation *anchor = entry.findAncestorOpInBlock(*op)) {
      anchors.push_back(anchor);
      if (!last || last->isBeforeInBlock(anchor))
        last = anchor;
    }
  }
  if (!last)
    return failure();
  for (Operation *anchor : anchors)
    if (isa<LoopLikeOpInterface>(anchor) && anchor->isBeforeInBlock(last))
      return failure();
  return std::make_pair(recomputed, segments.lookup(last));
}

/// Offsets for `slots` in one arena, first fit by decreasing size: each at
/// the lowest offset, aligned to `align`, free of the slots placed before
/// it that are live at the same time. Returns the arena's bytes.
static int64_t assignOffsets(MutableArrayRef<Slot *> slots, int64_t align) {
  llvm::stable_sort(
      slots, [](const Slot *a, const Slot *b) { return a->bytes > b->bytes; });
  int64_t arena = 0;
  for (auto [index, slot] : llvm::enumerate(slots)) {
    SmallVector<Slot *> live;
    for (Slot *placed : slots.take_front(index))
      if (overlap(*placed, *slot))
        live.push_back(placed);
    llvm::sort(live, [](Slot *a, Slot *b) { return a->offset < b->offset; });
    int64_t offset = 0;
    for (Slot *placed : live) {
      if (offset + slot->bytes <= placed->offset)
        break;
      offset = std::max(offset, static_cast<int64_t>(llvm::alignTo(
                                    placed->offset + placed->bytes, align)));
    }
    slot->offset = offset;
    arena = std::max(arena, offset + slot->bytes);
  }
  return arena;
}

/// Replaces the allocations of `slots` (one block, no operands) by views at
/// their offsets of one `i8` allocation, when that needs fewer bytes than
/// the buffers themselves (the offsets are aligned, the sizes are not).
static bool packSlots(MutableArrayRef<Slot *> slots) {
  int64_t align = 64, total = 0;
  for (Slot *slot : slots) {
    align = std::max<int64_t>(align, slot->alloc.getAlignment().value_or(0));
    total += slot->bytes;
  }
  int64_t arenaBytes = assignOffsets(slots, align);
  if (slots.size() < 2 || arenaBytes >= total)
    return false;
  memref::AllocOp first = slots.front()->alloc;
  for (Slot *slot : slots)
    if (slot->alloc->isBeforeInBlock(first))
      first = slot->alloc;
  OpBuilder builder(first);
  auto arenaType = MemRefType::get({arenaBytes}, builder.getI8Type(),
                                   MemRefLayoutAttrInterface(),
                                   first.getType().getMemorySpace());
  auto arena = memref::AllocOp::create(builder, first.getLoc(), arenaType,
                                       builder.getI64IntegerAttr(align));
  // One constant per offset, after the arena.
  DenseMap<int64_t, Value> offsets;
  for (Slot *slot : slots)
    if (!offsets.count(slot->offset))
      offsets[slot->offset] =
          arith::ConstantIndexOp::create(builder, first.getLoc(), slot->offset);
  for (Slot *slot : slots) {
    builder.setInsertionPoint(slot->alloc);
    Value view = memref::ViewOp::create(builder, slot->alloc.getLoc(),
                                        slot->alloc.getType(), arena,
                                        offsets[slot->offset], ValueRange());
    slot->alloc.getResult().replaceAllUsesWith(view);
    slot->alloc.erase();
    if (slot->origin)
      slot->origin->alloc = nullptr;
  }
  return true;
}

namespace {
struct ShareBuffersPass : public ga::impl::ShareBuffersBase<ShareBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    OpOrder order(func);
    // Candidates, grouped by storage (getStorageKey), in the order of
    // their first access.
    DenseMap<StorageKey, SmallVector<LiveRange>> groups;
    func.walk([&](memref::AllocOp alloc) {
      if (std::optional<LiveRange> range = getLiveRange(alloc, order))
        groups[getStorageKey(alloc)].push_back(*range);
    });
    // Packing first, each candidate on its own (an arena reuses offsets
    // of equal sizes as the slots below would); what it leaves is shared.
    if (pack) {
      std::deque<Slot> candidates;
      for (auto &entry : groups)
        for (LiveRange &range : entry.second)
          candidates.push_back(
              {range.alloc, {{range.first, range.last}}, 0, 0, &range});
      packGroups(func, candidates);
    }
    DominanceInfo dominance(func);
    std::deque<Slot> slots;
    for (auto &entry : groups) {
      llvm::erase_if(entry.second,
                     [](const LiveRange &range) { return !range.alloc; });
      shareGroup(entry.second, dominance, slots);
    }
  }

  /// Gives the candidates of one storage key one buffer each time one is
  /// free, first come first served; appends the buffers to `slots`.
  void shareGroup(SmallVector<LiveRange> &ranges, DominanceInfo &dominance,
                  std::deque<Slot> &slots) {
    llvm::stable_sort(ranges, [](const LiveRange &a, const LiveRange &b) {
      return a.first < b.first;
    });
    size_t begin = slots.size();
    for (LiveRange &range : ranges) {
      auto slot = std::find_if(
          slots.begin() + begin, slots.end(), [&](const Slot &slot) {
            return slot.ranges.back().second < range.first &&
                   dominatesOrCanMove(dominance, slot.alloc, range.alloc);
          });
      if (slot == slots.end()) {
        slots.push_back({range.alloc, {{range.first, range.last}}});
        continue;
      }
      memref::AllocOp shared = slot->alloc;
      // Hoisted allocations sit in one block in any order: the shared
      // one (no operands) moves up to dominate the uses it takes over.
      if (!dominance.properlyDominates(shared.getOperation(),
                                       range.alloc.getOperation()))
        shared->moveBefore(range.alloc);
      if (range.alloc.getAlignment().value_or(0) >
          shared.getAlignment().value_or(0))
        shared.setAlignment(*range.alloc.getAlignment());
      range.alloc.getResult().replaceAllUsesWith(
          reshapeTo(shared, range.alloc));
      range.alloc.erase();
      slot->ranges.push_back({range.first, range.last});
      ++numShared;
    }
  }

  /// Packs the buffers of one block and memory space that the memory
  /// report counts alike (getReportClass) at byte offsets of one arena.
  void packGroups(func::FuncOp func, std::deque<Slot> &slots) {
    using PackKey = std::tuple<Block *, Attribute, unsigned, unsigned>;
    llvm::MapVector<PackKey, SmallVector<Slot *>> groups;
    Block &entry = func.getBody().front();
    DenseMap<Operation *, unsigned> segments;
    unsigned loops = 0;
    for (Operation &op : entry) {
      segments[&op] = loops;
      loops += isa<LoopLikeOpInterface>(op);
    }
    for (Slot &slot : slots) {
      FailureOr<int64_t> bytes = getPackableBytes(slot.alloc);
      if (failed(bytes))
        continue;
      slot.bytes = *bytes;
      auto reportClass = getReportClass(slot.alloc, segments, entry);
      if (failed(reportClass))
        continue;
      groups[{slot.alloc->getBlock(), slot.alloc.getType().getMemorySpace(),
              static_cast<unsigned>(reportClass->first), reportClass->second}]
          .push_back(&slot);
    }
    for (auto &group : groups)
      if (packSlots(group.second)) {
        ++numArenas;
        numPacked += group.second.size();
      }
  }
};
} // namespace
