//===- FuseElementwise.cpp - element-wise fusion without repeated updates -===//
//
// --ga-fuse-elementwise: upstream's element-wise fusion of linalg ops on
// tensors, with a control function that leaves out the one fusion upstream
// miscompiles (MLIR 22): a producer reading its own init, fused into a
// consumer with loops the producer does not have. Optionally
// (recompute-shared), a cheap producer with several users is fused into each
// of them; optionally (fuse-kept), a producer read again after its consumer
// is fused into it as an extra result.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/Utils/Gemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/SubsetOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ga {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// True when fusing the producer of `fused` into its consumer would repeat the
/// producer's read-modify-write of its init: the producer's payload reads an
/// init (so upstream keeps that result as an output of the fused op, indexed
/// by the producer's loops) and the consumer has loops that its map of the
/// fused operand drops (each element of that output is then updated once per
/// iteration of those loops).
static bool repeatsInitUpdate(OpOperand *fused) {
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  if (!producer || !consumer)
    return false;
  bool readsInit =
      llvm::any_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
        return producer.payloadUsesValueFromOperand(&init);
      });
  if (!readsInit)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(fused);
  return !map.isPermutation();
}

/// True when fusing along `fused` (an element-wise fusion, or a reshape
/// folded by expansion) would rewrite an op that
/// --ga-isolate-library-products marked as a library product: its owner or
/// the producer of its value.
static bool changesLibraryProduct(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  return fused->getOwner()->hasAttr(kLibraryProductAttrName) ||
         (producer && producer->hasAttr(kLibraryProductAttrName));
}

/// True when folding a reshape along `fused` (by expansion: the linalg op
/// on either side of the reshape takes the other shape) would leave the
/// result of an op that is written into a destination (a subset insertion:
/// `tensor.insert_slice`, `bufferization.materialize_in_destination`, e.g. an
/// update written in place) behind a reshape: eliminate-empty-tensors could
/// no longer make that op compute into the destination, and bufferization
/// would copy it there.
static bool reshapesDestinationWrite(OpOperand *fused) {
  auto writesIntoDestination = [](Operation *op) {
    if (!isa_and_nonnull<linalg::LinalgOp>(op))
      return false;
    return llvm::any_of(op->getUses(), [](OpOperand &use) {
      auto insertion = dyn_cast<SubsetInsertionOpInterface>(use.getOwner());
      return insertion && &insertion.getSourceOperand() == &use;
    });
  };
  return writesIntoDestination(fused->getOwner()) ||
         writesIntoDestination(fused->get().getDefiningOp());
}

/// True when `producer` is cheap to compute once per user: one result, all
/// loops parallel, a payload of at most `maxOps` operations without regions
/// or memory effects that does not read the init.
static bool isCheapToRecompute(linalg::GenericOp producer, unsigned maxOps) {
  if (!producer.hasPureTensorSemantics() || producer->getNumResults() != 1 ||
      producer.getNumParallelLoops() != producer.getNumLoops())
    return false;
  if (producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)))
    return false;
  unsigned numOps = 0;
  for (Operation &op : producer.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        ++numOps > maxOps)
      return false;
  }
  return true;
}

/// True when the producer of `fused` may be fused into its consumer although
/// its results have other users (fuse-kept): upstream then yields them from
/// the fused op, which stands where the consumer stood, and replaces every
/// other use by them. So each other user must come after the consumer in
/// its block (nested or not): a forward value that the backward reads
/// again. Producer and consumer share a block, so that no work moves into a
/// loop, and the consumer's loops are all parallel, so that each element of
/// a preserved result is written once.
static bool isReadAgainAfterConsumer(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  if (!producer || !consumer || producer->getBlock() != consumer->getBlock() ||
      consumer.getNumParallelLoops() != consumer.getNumLoops())
    return false;
  Block *block = consumer->getBlock();
  for (OpOperand &use : producer->getUses()) {
    if (&use == fused)
      continue;
    // The consumer reading it through another operand as well would read
    // its own result.
    Operation *user = block->findAncestorOpInBlock(*use.getOwner());
    if (!user || user == consumer || !consumer->isBeforeInBlock(user))
      return false;
  }
  return true;
}

namespace {

/// Fuses a producer whose results are read by `consumer` and again only after
/// it into `consumer`; the fused op yields those results too, and their later
/// users read them from it (fuse-kept). Upstream's pattern takes single-use
/// producers only; with several users its fusion recomputes the producer in
/// each of them as they are fused in turn, where a kept value is to be
/// computed, and stored, once.
struct FuseKeptProducer : OpRewritePattern<linalg::GenericOp> {
  FuseKeptProducer(MLIRContext *context, linalg::ControlFusionFn control,
                   std::function<void()> onFuse)
      : OpRewritePattern(context), control(std::move(control)),
        onFuse(std::move(onFuse)) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() ||
          !linalg::areElementwiseOpsFusable(operand) ||
          !isReadAgainAfterConsumer(operand) || !control(operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        continue;
      // Every use left is after the fused op (isReadAgainAfterConsumer).
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      onFuse();
      return success();
    }
    return rewriter.notifyMatchFailure(consumer, "no kept producer");
  }

  linalg::ControlFusionFn control;
  std::function<void()> onFuse;
};

/// Fuses a cheap producer with several users into all of them: every use
/// but the first gets a copy of the producer, after which each copy has a
/// single user and upstream's fusion absorbs it. Applies only when every use
/// can absorb it (otherwise the producer stays and the copies only add
/// work); a matrix product absorbs only a producer without arithmetic, so
/// that it stays a plain multiply-add.
struct RecomputeSharedProducer : OpRewritePattern<linalg::GenericOp> {
  RecomputeSharedProducer(MLIRContext *context, unsigned maxOps,
                          bool keepProductEpilogues,
                          linalg::ControlFusionFn control,
                          std::function<void()> onRecompute)
      : OpRewritePattern(context), maxOps(maxOps),
        keepProductEpilogues(keepProductEpilogues), control(std::move(control)),
        onRecompute(std::move(onRecompute)) {}

  LogicalResult matchAndRewrite(linalg::GenericOp producer,
                                PatternRewriter &rewriter) const override {
    if (!isCheapToRecompute(producer, maxOps))
      return rewriter.notifyMatchFailure(producer, "not cheap to recompute");
    if (keepProductEpilogues &&
        llvm::any_of(producer.getDpsInputs(), [](Value input) {
          auto product = input.getDefiningOp<linalg::GenericOp>();
          return product && isLibraryProduct(product);
        }))
      return rewriter.notifyMatchFailure(producer, "a product's epilogue");
    Value result = producer->getResult(0);
    if (result.use_empty() || result.hasOneUse())
      return rewriter.notifyMatchFailure(producer, "not shared");
    bool movesDataOnly = producer.getBody()->without_terminator().empty();
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : result.getUses()) {
      auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!consumer || !linalg::areElementwiseOpsFusable(&use) ||
          !control(&use))
        return rewriter.notifyMatchFailure(producer, "a user cannot absorb");
      if (!movesDataOnly && isLibraryProduct(consumer))
        return rewriter.notifyMatchFailure(producer, "a user is a product");
      uses.push_back(&use);
    }
    rewriter.setInsertionPoint(producer);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(copy->getResult(0)); });
    }
    onRecompute();
    return success();
  }

  unsigned maxOps;
  bool keepProductEpilogues;
  linalg::ControlFusionFn control;
  std::function<void()> onRecompute;
};

struct FuseElementwisePass
    : public ga::impl::FuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Upstream's default (a producer with one use), less the fusions that
    // repeat an update.
    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn control = [this, singleUse](OpOperand *fused) {
      if (!singleUse(fused))
        return false;
      if (changesLibraryProduct(fused)) {
        ++numKeptProducts;
        return false;
      }
      if (repeatsInitUpdate(fused)) {
        ++numRefused;
        return false;
      }
      return true;
    };
    // The pattern sets of upstream's linalg-fuse-elementwise-ops (without
    // its sparse tensor rewriting): the fusion itself, reshapes folded by
    // expansion, the canonicalizations it relies on, constant folding.
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::ControlFusionFn reshapeControl = [this, control](OpOperand *fused) {
      if (!control(fused))
        return false;
      if (reshapesDestinationWrite(fused)) {
        ++numKeptDestinations;
        return false;
      }
      return true;
    };
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, reshapeControl);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    // The checks of `control` less its single-use test, for the patterns
    // that fuse a producer with several users.
    linalg::ControlFusionFn absorbable = [](OpOperand *fused) {
      return !repeatsInitUpdate(fused) && !changesLibraryProduct(fused);
    };
    if (fuseKept)
      patterns.add<FuseKeptProducer>(context, absorbable,
                                     [this] { ++numFusedKept; });
    auto countRecomputed = [this] { ++numRecomputed; };
    if (recomputeShared) {
      // Each use is checked against `absorbable`.
      patterns.add<RecomputeSharedProducer>(context, maxRecomputeOps,
                                            keepProductEpilogues, absorbable,
                                            countRecomputed);
    }

    // Top-down, as upstream (compile time); no fixpoint in the iteration
    // limit only means fewer fusions, never a wrong one.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};

} // namespace
