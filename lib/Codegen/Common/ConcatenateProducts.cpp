//===- ConcatenateProducts.cpp - one GEMM for many small products ---------===//
//
// --ga-concatenate-products: loop-carried accumulators whose results are only
// summed after the loop become one accumulator; a chain of library products
// that add into one init becomes one product over the concatenated operands
// (K = the sum of the chain's K); independent library products that share an
// operand become one product over the concatenation of the other (M = the sum
// of their M).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "ga/Utils/Reductions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONCATENATEPRODUCTS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The fewest products worth one concatenated product: the concatenation
/// copies every operand it joins, which pays off against the library's
/// per-call packing only when it replaces many small calls (the steps of a
/// recurrence), not two or three (two projections of one input, a tied
/// weight's two gradients).
constexpr size_t kMinProducts = 4;

/// Whether `op` only adds into its init: a linalg op on tensors with one
/// init and one result whose region reads the init's block argument once,
/// in the `arith.addf` whose value it yields (`matchCombiner`). Its result is
/// then `init + f(inputs)` for an `f` that does not read the init, so a chain
/// of such ops may start from any accumulator and run in any order (exact up
/// to the reassociation of float sums).
bool addsIntoInit(Operation *operation) {
  auto op = dyn_cast<linalg::LinalgOp>(operation);
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1)
    return false;
  return getCombinerKind(op, 0) == vector::CombiningKind::ADD;
}

/// The single user of `value`, if it has exactly one use.
Operation *singleUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// Whether `op` is an element-wise sum of two tensors of its result's type:
/// a linalg.generic with identity maps, parallel loops, two inputs, and a
/// region that yields `in0 + in1` without reading its init.
bool isTensorSum(Operation *operation) {
  auto op = dyn_cast_or_null<linalg::GenericOp>(operation);
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Type type = op->getResult(0).getType();
  if (op.getInputs()[0].getType() != type ||
      op.getInputs()[1].getType() != type)
    return false;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || &body.front() != add.getOperation())
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (add.getLhs() == a && add.getRhs() == b) ||
         (add.getLhs() == b && add.getRhs() == a);
}

/// Folds the users of `value` into one when they are all element-wise sums
/// (`isTensorSum`) of the same two values and one of them dominates the
/// others: the copies that --ga-rematerialize makes of a sum at each of its
/// users. They compute one value, so this is CSE; without it, a step whose
/// sum of accumulators was recomputed would keep the accumulators apart and
/// sum in another order than the same step without recomputation, and the
/// two would differ in the last bits. Returns the one user, or null.
Operation *foldCopiedSums(Value value, DominanceInfo &dominance) {
  llvm::SetVector<Operation *> users(llvm::from_range, value.getUsers());
  if (users.empty() || !llvm::all_of(users, isTensorSum))
    return nullptr;
  auto operands = [](Operation *sum) {
    Value a = sum->getOperand(0), b = sum->getOperand(1);
    return a.getAsOpaquePointer() < b.getAsOpaquePointer()
               ? std::make_pair(a, b)
               : std::make_pair(b, a);
  };
  Operation *first = users.front();
  if (!llvm::all_of(users, [&](Operation *user) {
        return operands(user) == operands(first);
      }))
    return nullptr;
  Operation *keep = nullptr;
  for (Operation *candidate : users)
    if (llvm::all_of(users, [&](Operation *user) {
          return dominance.dominates(candidate, user);
        }))
      keep = candidate;
  if (!keep)
    return nullptr;
  for (Operation *user : users)
    if (user != keep) {
      user->getResult(0).replaceAllUsesWith(keep->getResult(0));
      user->erase();
    }
  return keep;
}

/// An accumulator of a loop: the iter_arg at `index`, and the ops that carry
/// it from its block argument to the yield, each adding into the previous.
struct Accumulator {
  unsigned index;
  SmallVector<Operation *> chain;
};

/// The accumulator of `loop` at `index`, when its block argument flows
/// through a chain of ops that only add into their init (each result used
/// only by the next op, all in the loop's body) into the yield, and the
/// loop's result is read by one element-wise sum (or by copies of it, which
/// are folded into one: foldCopiedSums).
std::optional<Accumulator> matchAccumulator(scf::ForOp loop, unsigned index,
                                            DominanceInfo &dominance) {
  Block *body = loop.getBody();
  Operation *yield = body->getTerminator();
  Accumulator acc{index, {}};
  Value value = loop.getRegionIterArg(index);
  while (true) {
    Operation *user = singleUser(value);
    if (!user)
      return std::nullopt;
    if (user == yield) {
      if (yield->getOperand(index) != value)
        return std::nullopt;
      break;
    }
    if (user->getBlock() != body || !addsIntoInit(user) ||
        cast<linalg::LinalgOp>(user).getDpsInitOperand(0)->get() != value)
      return std::nullopt;
    acc.chain.push_back(user);
    value = user->getResult(0);
  }
  if (acc.chain.empty())
    return std::nullopt;
  if (!foldCopiedSums(loop.getResult(index), dominance))
    return std::nullopt;
  return acc;
}

/// The last sum of the tree of element-wise sums that `sum` belongs to
/// (following results read by another sum, or by copies of it).
Operation *sumTreeRoot(Operation *sum, DominanceInfo &dominance) {
  while (Operation *user = foldCopiedSums(sum->getResult(0), dominance))
    sum = user;
  return sum;
}

struct ConcatenateProductsPass
    : public ga::impl::ConcatenateProductsBase<ConcatenateProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      mergeSummedAccumulators(loop);
    // Products are ops of blocks outside linalg regions; each step erases
    // ops (and their regions' blocks), so it collects its blocks anew.
    auto blocks = [&] {
      SmallVector<Block *> result;
      getOperation().walk([&](Block *block) {
        if (!isa<linalg::LinalgOp>(block->getParentOp()))
          result.push_back(block);
      });
      return result;
    };
    for (Block *block : blocks())
      concatenateChains(*block);
    DominanceInfo dominance(getOperation());
    for (Block *block : blocks())
      concatenateSharedOperands(*block, dominance);
  }

  /// Merges the accumulators of `loop` whose results are summed by one tree
  /// of element-wise sums after the loop into the first of them (see
  /// Passes.td).
  void mergeSummedAccumulators(scf::ForOp loop);

  /// Rewrites every maximal chain of library products in `block` that add
  /// into one init into one product over concatenated operands.
  void concatenateChains(Block &block);

  /// One product for `chain` (at least two library products, each adding
  /// into the previous one's result), or failure when the operands have no
  /// common reduction dimension to concatenate along.
  LogicalResult concatenate(ArrayRef<Operation *> chain);

  /// Rewrites the library products of `block` that start from zero and
  /// share one operand into one product per group over the concatenation
  /// of their other operand (see Passes.td).
  void concatenateSharedOperands(Block &block, DominanceInfo &dominance);

  /// One product for `group` (products of one kind from zero that share
  /// operand `shared`), placed before `before`; its rows are the results.
  void concatenateRows(ArrayRef<Operation *> group, unsigned shared,
                       Operation *before);
};

void ConcatenateProductsPass::mergeSummedAccumulators(scf::ForOp loop) {
  // Group the accumulators by the sum tree that reads their results.
  llvm::MapVector<Operation *, SmallVector<Accumulator>> groups;
  DominanceInfo dominance(getOperation());
  for (unsigned i = 0, e = loop.getNumResults(); i < e; ++i)
    if (std::optional<Accumulator> acc = matchAccumulator(loop, i, dominance))
      groups[sumTreeRoot(singleUser(loop.getResult(i)), dominance)].push_back(
          *acc);
  bool changed = false;
  for (auto &[root, members] : groups) {
    if (members.size() < 2)
      continue;
    // In the order of the body: each chain then reads the one before it.
    llvm::sort(members, [](const Accumulator &a, const Accumulator &b) {
      return a.chain.front()->isBeforeInBlock(b.chain.front());
    });
    // The first keeps its init; the others must start from zero (their
    // results become that init, which the sums then skip), and their chains
    // must not interleave with the previous one's.
    Accumulator *tail = &members.front();
    Operation *yield = loop.getBody()->getTerminator();
    for (Accumulator &acc : llvm::drop_begin(members)) {
      if (!isNeutralTensor(loop.getInitArgs()[acc.index],
                           vector::CombiningKind::ADD) ||
          !tail->chain.back()->isBeforeInBlock(acc.chain.front()))
        continue;
      auto first = cast<linalg::LinalgOp>(acc.chain.front());
      first.getDpsInitOperand(0)->set(tail->chain.back()->getResult(0));
      yield->setOperand(members.front().index, acc.chain.back()->getResult(0));
      yield->setOperand(acc.index, loop.getRegionIterArg(acc.index));
      // The loop's result is now the zero it started from: a sum that reads
      // it is its other operand, any other use reads the zero.
      Value result = loop.getResult(acc.index);
      Operation *sum = singleUser(result);
      if (isTensorSum(sum)) {
        Value other = sum->getOperand(sum->getOperand(0) == result ? 1 : 0);
        sum->getResult(0).replaceAllUsesWith(other);
        sum->erase();
      } else {
        result.replaceAllUsesWith(loop.getInitArgs()[acc.index]);
      }
      tail = &acc;
      ++numMerged;
      changed = true;
    }
  }
  if (!changed)
    return;
  // Remove the iter_args that now only pass their init through.
  RewritePatternSet patterns(loop.getContext());
  scf::ForOp::getCanonicalizationPatterns(patterns, loop.getContext());
  (void)applyOpPatternsGreedily({loop.getOperation()}, std::move(patterns));
}

void ConcatenateProductsPass::concatenateChains(Block &block) {
  auto isProduct = [](Operation *op) {
    return op->hasAttr("ga.library_product") && addsIntoInit(op);
  };
  // The next product of a chain: the single user of `op`'s result, a
  // library product of the same kind (maps, iterators, region, types) that
  // adds into it.
  auto next = [&](Operation *op) -> Operation * {
    Operation *user = singleUser(op->getResult(0));
    if (!user || user->getBlock() != &block || !isProduct(user) ||
        cast<linalg::LinalgOp>(user).getDpsInitOperand(0)->get() !=
            op->getResult(0) ||
        user->getOperandTypes() != op->getOperandTypes() ||
        !OperationEquivalence::isEquivalentTo(
            op, user, OperationEquivalence::ignoreValueEquivalence, nullptr,
            OperationEquivalence::IgnoreLocations))
      return nullptr;
    return user;
  };
  SmallVector<SmallVector<Operation *>> chains;
  for (Operation &op : block) {
    if (!isProduct(&op))
      continue;
    // Start only at the head of a chain.
    Value init = cast<linalg::LinalgOp>(op).getDpsInitOperand(0)->get();
    if (Operation *previous = init.getDefiningOp())
      if (previous->getBlock() == &block && isProduct(previous) &&
          next(previous) == &op)
        continue;
    SmallVector<Operation *> chain{&op};
    while (Operation *user = next(chain.back()))
      chain.push_back(user);
    if (chain.size() >= kMinProducts)
      chains.push_back(std::move(chain));
  }
  for (SmallVector<Operation *> &chain : chains)
    if (succeeded(concatenate(chain)))
      numConcatenated += chain.size() - 1;
}

LogicalResult
ConcatenateProductsPass::concatenate(ArrayRef<Operation *> chain) {
  auto last = cast<linalg::LinalgOp>(chain.back());
  // The one reduction dimension, which every input reads along exactly one
  // of its dimensions (a projected permutation) and the init does not.
  SmallVector<unsigned> reductions;
  last.getReductionDims(reductions);
  if (reductions.size() != 1)
    return failure();
  unsigned k = reductions.front();
  SmallVector<int64_t> concatDims;
  for (OpOperand *input : last.getDpsInputOperands()) {
    AffineMap map = last.getMatchingIndexingMap(input);
    std::optional<unsigned> position =
        map.isProjectedPermutation()
            ? map.getResultPosition(getAffineDimExpr(k, map.getContext()))
            : std::nullopt;
    if (!position)
      return failure();
    concatDims.push_back(*position);
  }
  // Operands computed in the function only: a parameter (an argument) is
  // never copied per call (the in-place contract).
  for (Operation *op : chain)
    for (OpOperand *input : cast<linalg::LinalgOp>(op).getDpsInputOperands())
      if (isa<BlockArgument>(input->get()))
        return failure();
  // Every operand of the chain dominates its own product, which is before
  // the last one in this block: the concatenations go right before it.
  OpBuilder builder(last);
  Location loc = last.getLoc();
  SmallVector<Value> inputs;
  for (unsigned i = 0, e = concatDims.size(); i < e; ++i) {
    SmallVector<Value> parts = llvm::map_to_vector(chain, [&](Operation *op) {
      return cast<linalg::LinalgOp>(op).getDpsInputOperand(i)->get();
    });
    inputs.push_back(
        tensor::ConcatOp::create(builder, loc, concatDims[i], parts));
  }
  Value init =
      cast<linalg::LinalgOp>(chain.front()).getDpsInitOperand(0)->get();
  Operation *product = builder.clone(*last);
  // The clone's operands by position: the inputs, then the init.
  for (auto [i, value] : llvm::enumerate(inputs))
    product->setOperand(i, value);
  product->setOperand(inputs.size(), init);
  last->getResult(0).replaceAllUsesWith(product->getResult(0));
  for (Operation *op : llvm::reverse(chain))
    op->erase();
  return success();
}

/// The dimension of the init, and of the only input other than `shared`,
/// along which `op`'s results may be concatenated: a parallel loop that the
/// init and that input each read along exactly one dimension (projected
/// permutations) and operand `shared` does not read. Static shapes only.
std::optional<std::pair<int64_t, int64_t>> rowDims(linalg::LinalgOp op,
                                                   unsigned shared) {
  if (op.getNumDpsInputs() != 2 || op.hasDynamicShape())
    return std::nullopt;
  OpOperand *other = op.getDpsInputOperand(1 - shared);
  AffineMap sharedMap =
      op.getMatchingIndexingMap(op.getDpsInputOperand(shared));
  AffineMap otherMap = op.getMatchingIndexingMap(other);
  AffineMap initMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!otherMap.isProjectedPermutation() || !initMap.isProjectedPermutation())
    return std::nullopt;
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (op.getIteratorTypesArray()[d] != utils::IteratorType::parallel)
      continue;
    AffineExpr dim = getAffineDimExpr(d, op.getContext());
    std::optional<unsigned> inOther = otherMap.getResultPosition(dim);
    std::optional<unsigned> inInit = initMap.getResultPosition(dim);
    if (inOther && inInit && !sharedMap.isFunctionOfDim(d))
      return std::make_pair<int64_t, int64_t>(*inOther, *inInit);
  }
  return std::nullopt;
}

/// The first op of `block` (an ancestor in it) that uses a result of `op`,
/// or null when none does.
Operation *firstUserInBlock(Operation *op, Block &block) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

/// Whether `value` dominates `point` (an op of `block`) or can be made to:
/// it is the result of an op of `block` after `point`, free of memory
/// effects and without regions (a slice or reshape of a step's input), whose
/// operands can (at most `depth` such ops deep), and no result of the ops
/// in `group` (which the product at `point` replaces) is among them. Those
/// ops are appended to `toMove`, operands first.
bool canHoist(Value value, Operation *point, Block &block,
              ArrayRef<Operation *> group, DominanceInfo &dominance,
              SmallVectorImpl<Operation *> &toMove, unsigned depth = 4) {
  Operation *def = value.getDefiningOp();
  if (def && llvm::is_contained(group, def))
    return false;
  if (dominance.properlyDominates(value, point))
    return true;
  if (!def || depth == 0 || def->getBlock() != &block ||
      def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!canHoist(operand, point, block, group, dominance, toMove, depth - 1))
      return false;
  toMove.push_back(def);
  return true;
}

/// The number of elements of a static tensor `value`.
int64_t numElements(Value value) {
  return cast<RankedTensorType>(value.getType()).getNumElements();
}

void ConcatenateProductsPass::concatenateSharedOperands(
    Block &block, DominanceInfo &dominance) {
  // Candidates: library products from zero (their init is a zero tensor,
  // which a wider zero replaces), with a dimension to concatenate along.
  SmallVector<std::pair<Operation *, unsigned>> candidates;
  for (Operation &op : block) {
    auto product = dyn_cast<linalg::LinalgOp>(&op);
    if (!product || !op.hasAttr("ga.library_product") || !addsIntoInit(&op) ||
        !isNeutralTensor(product.getDpsInitOperand(0)->get(),
                         vector::CombiningKind::ADD) ||
        !firstUserInBlock(&op, block))
      continue;
    // Only where the operand that is copied is the smaller one (each
    // product then saves the library one reading, a packing, of the larger)
    // and is computed in the function, not one of its arguments: a
    // parameter is never copied per call (the in-place contract).
    for (unsigned shared = 0; shared < 2; ++shared)
      if (rowDims(product, shared) &&
          !isa<BlockArgument>(op.getOperand(1 - shared)) &&
          numElements(op.getOperand(1 - shared)) <
              numElements(op.getOperand(shared)))
        candidates.push_back({&op, shared});
  }
  // Greedy groups in body order: a product joins the group of its kind and
  // shared operand when every operand of the group then dominates the
  // group's first use, where the concatenated product goes.
  DenseSet<Operation *> taken;
  for (auto [i, head] : llvm::enumerate(candidates)) {
    auto [op, shared] = head;
    if (taken.contains(op))
      continue;
    Value weight = op->getOperand(shared);
    SmallVector<Operation *> group{op};
    Operation *before = firstUserInBlock(op, block);
    // The inputs (not the zero init, which a wider one replaces).
    SmallVector<Operation *> toMove;
    auto available = [&](Operation *member, Operation *point,
                         ArrayRef<Operation *> members) {
      return llvm::all_of(member->getOperands().take_front(2), [&](Value v) {
        return canHoist(v, point, block, members, dominance, toMove);
      });
    };
    if (!available(op, before, group))
      continue;
    for (auto [other, otherShared] : llvm::drop_begin(candidates, i + 1)) {
      if (taken.contains(other) || otherShared != shared ||
          other->getOperand(shared) != weight ||
          other->getOperandTypes() != op->getOperandTypes() ||
          !OperationEquivalence::isEquivalentTo(
              op, other, OperationEquivalence::ignoreValueEquivalence, nullptr,
              OperationEquivalence::IgnoreLocations))
        continue;
      Operation *use = firstUserInBlock(other, block);
      Operation *point = use->isBeforeInBlock(before) ? use : before;
      group.push_back(other);
      if (!llvm::all_of(group, [&](Operation *member) {
            return available(member, point, group);
          })) {
        group.pop_back();
        continue;
      }
      before = point;
    }
    if (group.size() < kMinProducts)
      continue;
    taken.insert(group.begin(), group.end());
    toMove.clear();
    for (Operation *member : group)
      (void)available(member, before, group);
    for (Operation *op : toMove)
      if (!op->isBeforeInBlock(before))
        op->moveBefore(before);
    concatenateRows(group, shared, before);
    numRowConcatenated += group.size() - 1;
  }
}

void ConcatenateProductsPass::concatenateRows(ArrayRef<Operation *> group,
                                              unsigned shared,
                                              Operation *before) {
  auto first = cast<linalg::LinalgOp>(group.front());
  auto [inputDim, initDim] = *rowDims(first, shared);
  unsigned other = 1 - shared;
  OpBuilder builder(before);
  Location loc = first.getLoc();
  SmallVector<Value> parts = llvm::map_to_vector(
      group, [&](Operation *op) { return op->getOperand(other); });
  Value rows = tensor::ConcatOp::create(builder, loc, inputDim, parts);
  // A zero of the concatenated shape: the fill (or splat) of the first.
  auto initType =
      cast<RankedTensorType>(first.getDpsInitOperand(0)->get().getType());
  SmallVector<int64_t> shape(initType.getShape());
  int64_t rowsPerProduct = shape[initDim];
  shape[initDim] *= group.size();
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getZeroAttr(initType.getElementType()));
  Value empty =
      tensor::EmptyOp::create(builder, loc, shape, initType.getElementType());
  Value init = linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
  Operation *product = builder.clone(*first);
  product->setOperand(other, rows);
  product->setOperand(2, init);
  product->getResult(0).setType(init.getType());
  // Each product's result is its rows of the whole.
  SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
      initType.getShape(),
      [&](int64_t size) -> OpFoldResult { return builder.getIndexAttr(size); });
  SmallVector<OpFoldResult> strides(shape.size(), builder.getIndexAttr(1));
  for (auto [i, op] : llvm::enumerate(group)) {
    SmallVector<OpFoldResult> offsets(shape.size(), builder.getIndexAttr(0));
    offsets[initDim] = builder.getIndexAttr(i * rowsPerProduct);
    Value slice = tensor::ExtractSliceOp::create(
        builder, loc, initType, product->getResult(0), offsets, sizes, strides);
    op->getResult(0).replaceAllUsesWith(slice);
  }
  for (Operation *op : group)
    op->erase();
}

} // namespace
