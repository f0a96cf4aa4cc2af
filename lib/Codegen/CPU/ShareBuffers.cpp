//===- ShareBuffers.cpp - one buffer for disjoint live ranges -------------===//
//
// --ga-share-buffers: temporaries of one type whose live ranges inside a
// block do not overlap get one allocation. After the hoisting of
// allocations out of the micro-batch loop, this is what lets a value
// recomputed in the backward reuse the storage of values dead by then.
//
// Invariant: a buffer is only reused by an op that writes every element of
// it without reading it, placed after the last access to the buffer it
// reuses; a candidate's contents never outlive one execution of the block
// that holds its accesses. The results are bitwise those without the pass.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "ga/IR/GAShardOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::ga {
#define GEN_PASS_DEF_SHAREBUFFERS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
/// A candidate allocation: the block that holds its accesses and its live
/// range there (positions of ops in that block).
struct LiveRange {
  memref::AllocOp alloc;
  Block *block = nullptr;
  unsigned first = 0, last = 0;
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

/// The accesses to the buffer of `alloc` (through views), or failure when
/// one may let it escape or touch it in a way not declared.
static FailureOr<SmallVector<Operation *>> getAccesses(memref::AllocOp alloc) {
  SmallVector<Operation *> accesses;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
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
      accesses.push_back(user);
    }
  }
  return accesses;
}

/// The live range of `alloc` when it is a candidate.
static std::optional<LiveRange> getLiveRange(memref::AllocOp alloc) {
  if (!alloc.getType().hasStaticShape() || !alloc.getDynamicSizes().empty())
    return std::nullopt;
  FailureOr<SmallVector<Operation *>> accesses = getAccesses(alloc);
  if (failed(accesses) || accesses->empty())
    return std::nullopt;
  // The innermost block that holds every access.
  Block *block = (*accesses)[0]->getBlock();
  auto holds = [&](Block *candidate) {
    return llvm::all_of(*accesses, [&](Operation *op) {
      return candidate->findAncestorOpInBlock(*op) != nullptr;
    });
  };
  while (block && !holds(block)) {
    Operation *parent = block->getParentOp();
    block = parent ? parent->getBlock() : nullptr;
  }
  if (!block)
    return std::nullopt;
  // Positions of the ops of the block.
  DenseMap<Operation *, unsigned> positions;
  for (auto [i, op] : llvm::enumerate(*block))
    positions[&op] = i;
  LiveRange range{alloc, block, ~0u, 0};
  Operation *firstAccess = nullptr;
  bool firstIsShared = false;
  for (Operation *op : *accesses) {
    unsigned position = positions.lookup(block->findAncestorOpInBlock(*op));
    if (position < range.first) {
      range.first = position;
      firstAccess = op;
      firstIsShared = false;
    } else if (position == range.first) {
      firstIsShared = true;
    }
    range.last = std::max(range.last, position);
  }
  // The first access is an op of the block alone, which overwrites it.
  if (firstIsShared || firstAccess->getBlock() != block ||
      !overwritesWhole(firstAccess, alloc.getResult()))
    return std::nullopt;
  return range;
}

namespace {
struct ShareBuffersPass : public ga::impl::ShareBuffersBase<ShareBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Candidates, grouped by block and type, in the order of their first
    // access.
    DenseMap<std::pair<Block *, Type>, SmallVector<LiveRange>> groups;
    func.walk([&](memref::AllocOp alloc) {
      if (std::optional<LiveRange> range = getLiveRange(alloc))
        groups[{range->block, alloc.getType()}].push_back(*range);
    });
    DominanceInfo dominance(func);
    // Innermost blocks first: the buffers left in a block after its own
    // sharing are candidates of the block around it too (see project).
    SmallVector<std::pair<Block *, Type>> keys;
    for (auto &entry : groups)
      keys.push_back(entry.first);
    auto depth = [](Block *block) {
      unsigned d = 0;
      for (Operation *op = block->getParentOp(); op; op = op->getParentOp())
        ++d;
      return d;
    };
    while (!keys.empty()) {
      // The deepest block left (its group may have grown from inner ones).
      auto *deepest = llvm::max_element(keys, [&](auto a, auto b) {
        return depth(a.first) < depth(b.first);
      });
      std::pair<Block *, Type> key = *deepest;
      keys.erase(deepest);
      SmallVector<LiveRange> ranges = groups[key];
      for (memref::AllocOp kept : share(ranges, dominance))
        project(kept, key.first, groups, keys);
    }
  }

  /// Shares the buffers of `ranges` (candidates of one block and type);
  /// returns the allocations left.
  SmallVector<memref::AllocOp> share(SmallVector<LiveRange> &ranges,
                                     DominanceInfo &dominance) {
    llvm::stable_sort(ranges, [](const LiveRange &a, const LiveRange &b) {
      return a.first < b.first;
    });
    // Each slot: its allocation and the last access so far.
    SmallVector<std::pair<memref::AllocOp, unsigned>> slots;
    for (LiveRange &range : ranges) {
      auto *slot = llvm::find_if(slots, [&](auto &slot) {
        return slot.second < range.first &&
               dominance.properlyDominates(slot.first.getOperation(),
                                           range.alloc.getOperation());
      });
      if (slot == slots.end()) {
        slots.emplace_back(range.alloc, range.last);
        continue;
      }
      memref::AllocOp shared = slot->first;
      if (range.alloc.getAlignment().value_or(0) >
          shared.getAlignment().value_or(0))
        shared.setAlignment(*range.alloc.getAlignment());
      range.alloc.getResult().replaceAllUsesWith(shared.getResult());
      range.alloc.erase();
      slot->second = range.last;
      ++numShared;
    }
    return llvm::to_vector(llvm::make_first_range(slots));
  }

  /// A buffer whose contents never outlive one execution of `block` (every
  /// candidate's, and so every buffer left after sharing them) is also dead
  /// outside the op that holds `block`: a candidate of the block around
  /// that op, live at that op alone. A micro-batch loop's temporaries then
  /// share the storage of those of the first micro-batch peeled before it
  /// (--ga-peel-first-accumulation), dead before the loop starts.
  void
  project(memref::AllocOp alloc, Block *block,
          DenseMap<std::pair<Block *, Type>, SmallVector<LiveRange>> &groups,
          SmallVector<std::pair<Block *, Type>> &keys) {
    Operation *holder = block->getParentOp();
    Block *outer = holder ? holder->getBlock() : nullptr;
    // Defined inside the op, the buffer would be one per execution of it
    // (and per iteration of a parallel loop): only hoisted ones, which every
    // execution shares already.
    if (!outer || isa<func::FuncOp>(holder) || holder->isAncestor(alloc))
      return;
    unsigned position = 0;
    for (Operation &op : *outer) {
      if (&op == holder)
        break;
      ++position;
    }
    std::pair<Block *, Type> key{outer, alloc.getType()};
    if (!llvm::is_contained(keys, key))
      keys.push_back(key);
    groups[key].push_back(LiveRange{alloc, outer, position, position});
  }
};
} // namespace
