//===- Rematerialize.cpp - recompute element-wise values at their users ---===//
//
// --ga-rematerialize: a value computed by a cheap element-wise op and read by
// several element-wise users (an activation read by the forward and by the
// backward) is recomputed right before each user but the first, from the
// same operands. Each copy then has one user, which the CPU pipeline's
// element-wise fusion absorbs, so the value no longer needs a buffer.
//
// Invariant: every copy is the op it copies on the same operands, placed
// where they dominate; no reduction is recomputed. The results are bitwise
// those of the step without the pass.
//
//===----------------------------------------------------------------------===//

#include "ga/Transforms/Passes.h"

#include "ga/Analysis/MemoryUsage.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::ga {
#define GEN_PASS_DEF_REMATERIALIZE
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// Whether every loop of `op` is parallel.
static bool isAllParallel(linalg::GenericOp op) {
  return op.getNumParallelLoops() == op.getNumLoops();
}

/// Whether `op` is an element-wise op on whole tensors (`arith.mulf %a, %b
/// : tensor<4xf32>`), which the CPU pipeline turns into an all-parallel
/// linalg.generic with identity maps before fusing.
static bool isElementwiseOnTensors(Operation *op) {
  return OpTrait::hasElementwiseMappableTraits(op) &&
         op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         isa<RankedTensorType>(op->getResult(0).getType()) &&
         isMemoryEffectFree(op);
}

/// Whether `producer` may be computed again at each user: an element-wise
/// op on tensors, or a linalg.generic with one result, all loops parallel,
/// pure tensor semantics, an identity-like map of its result and a payload
/// of at most `maxOps` operations without regions or memory effects that
/// does not read the init.
static bool isRecomputable(Operation *producer, unsigned maxOps) {
  if (isElementwiseOnTensors(producer))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic->getNumResults() != 1 || !isAllParallel(generic) ||
      !generic.getIndexingMapMatchingResult(generic->getResult(0))
           .isPermutation())
    return false;
  if (generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return false;
  unsigned numOps = 0;
  for (Operation &op : generic.getBody()->without_terminator())
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        ++numOps > maxOps)
      return false;
  return true;
}

/// Whether the user of `use` can absorb a copy of the element-wise op that
/// defines the value: an element-wise op on tensors, or an all-parallel
/// generic that reads it as an input through a projected permutation (what
/// upstream's element-wise fusion accepts), so that the arithmetic per
/// element stays that of an element-wise loop.
static bool canAbsorb(OpOperand &use) {
  if (isElementwiseOnTensors(use.getOwner()))
    return true;
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  return consumer && isAllParallel(consumer) &&
         consumer.hasPureTensorSemantics() && consumer.isDpsInput(&use) &&
         consumer.getMatchingIndexingMap(&use).isProjectedPermutation();
}

//===----------------------------------------------------------------------===//
// recompute=products: products are the checkpoints
//===----------------------------------------------------------------------===//

/// Whether `op` computes a product (a contraction or a convolution): what
/// recompute=products keeps.
static bool isProduct(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && (linalg::isaContractionOpInterface(linalgOp) ||
                      linalg::isaConvolutionOpInterface(linalgOp));
}

/// Whether `op` may be computed a second time from the same operands with
/// bitwise the same results, at another place of its block: no memory
/// effects, tensor results, and regions only as a linalg payload.
static bool isRecomputableOp(Operation *op) {
  if (op->getNumResults() == 0 || !isMemoryEffectFree(op) ||
      !llvm::all_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
    return false;
  return op->getNumRegions() == 0 || isa<linalg::LinalgOp>(op);
}

/// Marks `copy` as a recomputed value (`ga.recomputed`, which the memory
/// report counts) when it computes from tensor data: not an empty tensor or
/// a fill, whose buffer the op that writes it next owns.
static void markRecomputed(Operation *copy) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(copy);
  bool readsData = llvm::any_of(copy->getOpOperands(), [&](OpOperand &use) {
    return isa<TensorType>(use.get().getType()) &&
           !(dps && dps.isDpsInit(&use));
  });
  if (readsData)
    copy->setAttr(kRecomputedAttrName, UnitAttr::get(copy->getContext()));
}

namespace {
/// Which forward values a block-wide policy recomputes in the backward.
enum class CopyPolicy {
  /// Every value but the products.
  Products,
  /// The values that take more bytes than the kept values they are
  /// recomputed from.
  Attention,
  /// Every value but the checkpoints of the forward's dataflow.
  Layers,
};

/// The copies of one block for recompute=products, attention or layers: the
/// forward values (the ops before the block's first result) that the policy
/// recomputes, computed again for the ops after it, once, from the kept
/// values and the values defined before the block.
class BackwardCopies {
public:
  BackwardCopies(Block &block, CopyPolicy policy, unsigned &numCopies)
      : block(block), policy(policy), numCopies(numCopies) {}

  /// Recomputes the forward values read by the late ops; the number of
  /// ops copied.
  unsigned run();

private:
  /// The copy of `value` (a result of a forward op) placed before `before`
  /// (made there when it does not exist yet).
  Value getCopy(Value value, Operation *before);
  /// Leaves out of `forward` (as checkpoints) the element-wise ops that the
  /// copies would let the CPU pipeline fuse into a user they were not fused
  /// into before.
  void keepFusions(Operation *cut);
  /// The ops of `ops` that recompute=attention recomputes: see Passes.td.
  void selectLarger(ArrayRef<Operation *> ops);
  /// The ops of `ops` that recompute=layers recomputes: see Passes.td.
  void selectSegments(ArrayRef<Operation *> ops);
  /// Whether `value` is computed by a forward op that is recomputed.
  bool isRecomputed(Value value) const {
    Operation *op = value.getDefiningOp();
    return op && forward.contains(op);
  }

  Block &block;
  CopyPolicy policy;
  unsigned &numCopies;
  DenseSet<Operation *> forward;
  IRMapping copies;
};
} // namespace

/// The values `op` reads: its operands and the values its regions use from
/// above.
static SetVector<Value> getReadValues(Operation *op) {
  SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return used;
}

/// Bytes of the elements of `value` (0 for a non-tensor or a dynamic one).
static int64_t getTensorBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  int64_t bits = type.getElementType().isIntOrFloat()
                     ? type.getElementType().getIntOrFloatBitWidth()
                     : 64;
  return type.getNumElements() * llvm::divideCeil(bits, 8);
}

void BackwardCopies::selectLarger(ArrayRef<Operation *> ops) {
  // The kept values each recomputed op is computed from, in program order:
  // its operands that are kept, and those its recomputed operands are
  // computed from.
  DenseMap<Operation *, SetVector<Value>> sources;
  for (Operation *op : ops) {
    if (!isRecomputableOp(op))
      continue;
    SetVector<Value> from;
    for (Value value : getReadValues(op)) {
      Operation *producer = value.getDefiningOp();
      auto it = producer ? sources.find(producer) : sources.end();
      if (it != sources.end())
        from.insert(it->second.begin(), it->second.end());
      else
        from.insert(value);
    }
    int64_t bytes = 0, fromBytes = 0;
    for (Value result : op->getResults())
      bytes += getTensorBytes(result);
    for (Value value : from)
      fromBytes += getTensorBytes(value);
    if (bytes > fromBytes) {
      forward.insert(op);
      sources.try_emplace(op, std::move(from));
    }
  }
}

/// Whether every tensor `op` reads is computed in `block` by an op of
/// `from`: `op` computes from those values, constants and non-tensor values
/// alone.
static bool readsOnly(Operation *op, Block &block,
                      const DenseSet<Operation *> &from) {
  return llvm::all_of(getReadValues(op), [&](Value value) {
    Operation *producer = value.getDefiningOp();
    return !isa<TensorType>(value.getType()) ||
           (producer && producer->getBlock() == &block &&
            from.contains(producer));
  });
}

void BackwardCopies::selectSegments(ArrayRef<Operation *> ops) {
  // The activations: values of the forward that depend on the micro-batch
  // (on the block's arguments: the loop's index and carried values; in a
  // function's own block, its per-sample arguments) and on more than its
  // inputs.
  DenseSet<Value> dependent;
  auto func = dyn_cast<func::FuncOp>(block.getParentOp());
  for (BlockArgument arg : block.getArguments())
    if (!func ||
        func.getArgAttr(arg.getArgNumber(), GADialect::getBatchAttrName()))
      dependent.insert(arg);
  // The ops that only read the micro-batch's own data (they slice a value
  // defined before the block, an input at the loop's index, or compute
  // from such slices and constants: a one-hot of the targets, a padding
  // mask) and the constants (computed from no tensor of the micro-batch
  // or from before the block). Their values are the inputs again, not
  // activations: no checkpoint is needed to recompute them.
  DenseSet<Operation *> constants, data;
  DenseMap<Value, unsigned> lastRead;
  for (unsigned i = 0, e = ops.size(); i < e; ++i) {
    Operation *op = ops[i];
    bool reads = false;
    op->walk([&](Operation *nested) {
      for (Value value : nested->getOperands()) {
        if (!dependent.contains(value))
          continue;
        reads = true;
        Operation *producer = value.getDefiningOp();
        if (!producer || !data.contains(producer))
          lastRead[value] = i;
      }
    });
    if (!reads) {
      if (readsOnly(op, block, constants)) {
        constants.insert(op);
        data.insert(op);
      }
      continue;
    }
    bool input = isa<tensor::ExtractSliceOp, tensor::ExtractOp>(op) ||
                 (!isProduct(op) && readsOnly(op, block, data));
    if (input)
      data.insert(op);
    for (Value result : op->getResults()) {
      dependent.insert(result);
      if (!input)
        lastRead[result] = i;
    }
  }
  // A checkpoint: the one activation live after a forward op (every later
  // forward op reads the micro-batch through it, or through the inputs).
  SmallVector<SmallVector<Value>> dying(ops.size());
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  for (auto [value, last] : lastRead)
    if (Operation *producer = value.getDefiningOp();
        producer && position.count(producer) && last > position[producer])
      dying[last].push_back(value);
  DenseSet<Value> live, checkpoints;
  for (auto [i, op] : llvm::enumerate(ops)) {
    for (Value value : dying[i])
      live.erase(value);
    for (Value result : op->getResults())
      if (lastRead.lookup(result) > i)
        live.insert(result);
    if (live.size() == 1)
      checkpoints.insert(*live.begin());
  }
  for (Operation *op : ops)
    if (isRecomputableOp(op) &&
        llvm::any_of(op->getResults(),
                     [&](Value v) { return dependent.contains(v); }) &&
        llvm::none_of(op->getResults(),
                      [&](Value v) { return checkpoints.contains(v); }))
      forward.insert(op);
}

Value BackwardCopies::getCopy(Value value, Operation *before) {
  if (Value copy = copies.lookupOrNull(value))
    return copy;
  Operation *op = value.getDefiningOp();
  // Its operands first (they are placed before it), then the op itself.
  SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  for (Value operand : used)
    if (isRecomputed(operand))
      (void)getCopy(operand, before);
  OpBuilder builder(before);
  markRecomputed(builder.clone(*op, copies));
  ++numCopies;
  return copies.lookup(value);
}

void BackwardCopies::keepFusions(Operation *cut) {
  auto isLate = [&](Operation *user) {
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    return ancestor && cut->isBeforeInBlock(ancestor);
  };
  while (true) {
    // The forward ops that get a copy: those read by late ops, and those
    // that their copies read in turn.
    DenseSet<Operation *> copied;
    SmallVector<Operation *> worklist;
    auto reach = [&](Value value) {
      Operation *op = value.getDefiningOp();
      if (op && forward.contains(op) && copied.insert(op).second)
        worklist.push_back(op);
    };
    for (Operation *op : forward)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (isLate(user))
            reach(result);
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      SetVector<Value> used(op->operand_begin(), op->operand_end());
      getUsedValuesDefinedAbove(op->getRegions(), used);
      for (Value value : used)
        reach(value);
    }
    // An element-wise op fuses into its user when it has one (ga's
    // element-wise fusion): the op and its copy each keep either two users
    // or one that is element-wise, as the op had before (several users), so
    // that no value moves into a reduction's loop, whose vectorization (and
    // approximate math) may round differently.
    SmallVector<Operation *> fused;
    for (Operation *op : copied) {
      // A product is no element-wise producer: it fuses into nothing.
      if ((!isa<linalg::GenericOp>(op) && !isElementwiseOnTensors(op)) ||
          isProduct(op))
        continue;
      for (Value result : op->getResults()) {
        SmallVector<OpOperand *> kept, moved;
        for (OpOperand &use : result.getUses()) {
          Operation *ancestor = block.findAncestorOpInBlock(*use.getOwner());
          bool late = isLate(use.getOwner());
          (late ? moved : kept).push_back(&use);
          if (!late && ancestor && copied.contains(ancestor))
            moved.push_back(&use);
        }
        auto fuses = [](ArrayRef<OpOperand *> uses) {
          return uses.size() == 1 && !canAbsorb(*uses.front());
        };
        if (fuses(kept) || fuses(moved)) {
          fused.push_back(op);
          break;
        }
      }
    }
    if (fused.empty())
      return;
    // They stay checkpoints.
    for (Operation *op : fused)
      forward.erase(op);
  }
}

unsigned BackwardCopies::run() {
  // The cut: the first op whose result the block yields (the loss, which
  // ends the forward; what follows reads the forward's values).
  Operation *terminator = block.getTerminator();
  Operation *cut = nullptr;
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(op.getUsers(),
                     [&](Operation *user) { return user == terminator; })) {
      cut = &op;
      break;
    }
  if (!cut)
    return 0;
  SmallVector<Operation *> ops;
  for (Operation &op : llvm::make_range(block.begin(), cut->getIterator()))
    ops.push_back(&op);
  switch (policy) {
  case CopyPolicy::Products:
    for (Operation *op : ops)
      if (isRecomputableOp(op) && !isProduct(op))
        forward.insert(op);
    break;
  case CopyPolicy::Attention:
    selectLarger(ops);
    break;
  case CopyPolicy::Layers:
    selectSegments(ops);
    break;
  }
  keepFusions(cut);
  SmallVector<Operation *> late;
  for (Operation &op :
       llvm::make_range(std::next(cut->getIterator()), block.end()))
    late.push_back(&op);
  unsigned before = numCopies;
  for (Operation *op : late)
    op->walk([&](Operation *nested) {
      for (OpOperand &operand : nested->getOpOperands())
        if (isRecomputed(operand.get()))
          operand.set(getCopy(operand.get(), op));
    });
  return numCopies - before;
}

ArrayRef<StringRef> mlir::ga::getRecomputeSets() {
  // From least to most recomputation (the order the planner and the bench
  // list them in).
  static const StringRef sets[] = {"none", "pointwise", "attention", "products",
                                   "layers"};
  return sets;
}

namespace {
struct RematerializePass
    : public ga::impl::RematerializeBase<RematerializePass> {
  using Base::Base;

  void runOnOperation() override;
  /// Recomputes the value of `producer` at each of its users but the first;
  /// whether it did.
  bool recomputeAtUsers(Operation *producer);
};
} // namespace

bool RematerializePass::recomputeAtUsers(Operation *producer) {
  if (!isRecomputable(producer, maxOps))
    return false;
  Value result = producer->getResult(0);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  if (uses.size() < 2 || uses.size() > maxUsers ||
      !llvm::all_of(uses, [](OpOperand *use) { return canAbsorb(*use); }))
    return false;
  // The first user in program order keeps the op (a user in a nested
  // region counts at its ancestor in the producer's block).
  Block *block = producer->getBlock();
  auto position = [&](OpOperand *use) {
    return block->findAncestorOpInBlock(*use->getOwner());
  };
  llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
    Operation *x = position(a), *y = position(b);
    return x != y && x && y && x->isBeforeInBlock(y);
  });
  OpBuilder builder(producer->getContext());
  for (OpOperand *use : llvm::drop_begin(uses)) {
    // Right before the user: the operands of the producer dominate it.
    builder.setInsertionPoint(use->getOwner());
    Operation *copy = builder.clone(*producer);
    markRecomputed(copy);
    use->set(copy->getResult(0));
    ++numCopies;
  }
  ++numRecomputed;
  return true;
}

void RematerializePass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (!llvm::is_contained(getRecomputeSets(), recompute)) {
    func.emitError() << "--ga-rematerialize: unknown recompute policy '"
                     << recompute << "' (expected "
                     << llvm::join(getRecomputeSets(), ", ") << ")";
    return signalPassFailure();
  }
  if (recompute == "none")
    return;
  if (recompute != "pointwise") {
    CopyPolicy policy = recompute == "products"    ? CopyPolicy::Products
                        : recompute == "attention" ? CopyPolicy::Attention
                                                   : CopyPolicy::Layers;
    // Every block that yields values: the micro-batch loop's body, or the
    // function's own when it has none.
    SmallVector<Block *> blocks;
    func.walk([&](Block *block) {
      if (!isa<linalg::LinalgOp>(block->getParentOp()) && !block->empty() &&
          block->back().getNumOperands() != 0)
        blocks.push_back(block);
    });
    unsigned copied = 0;
    for (Block *block : blocks)
      numRecomputed += BackwardCopies(*block, policy, copied).run();
    numCopies += copied;
    return;
  }
  // The element-wise ops, in program order (walk order is program order
  // within a block).
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<linalg::GenericOp>(op) || isElementwiseOnTensors(op))
      ops.push_back(op);
  });
  for (int64_t position : values)
    if (position < 0 || position >= static_cast<int64_t>(ops.size())) {
      func.emitError() << "--ga-rematerialize: no element-wise op at position "
                       << position << " of @" << func.getSymName()
                       << " (it has " << ops.size() << ")";
      return signalPassFailure();
    }
  SmallVector<Operation *> candidates;
  if (values.empty()) {
    candidates = ops;
  } else {
    SmallVector<int64_t> positions(values.begin(), values.end());
    llvm::sort(positions);
    positions.erase(llvm::unique(positions), positions.end());
    for (int64_t position : positions)
      candidates.push_back(ops[position]);
  }
  // Last first: the copies of a value add users to the values it reads,
  // which are then recomputed at those copies in turn (a whole chain from
  // its checkpoints). The copies themselves have one user each.
  for (Operation *producer : llvm::reverse(candidates))
    (void)recomputeAtUsers(producer);
}
