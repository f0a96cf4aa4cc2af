//===- FuseElementwise.cpp - element-wise fusion without repeated updates -===//
//
// --ga-fuse-elementwise: upstream's element-wise fusion of linalg ops on
// tensors, with a control function that leaves out the one fusion upstream
// miscompiles (MLIR 22): a producer reading its own init, fused into a
// consumer with loops the producer does not have.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

namespace {

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
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);

    // Top-down, as upstream (compile time); no fixpoint in the iteration
    // limit only means fewer fusions, never a wrong one.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};

} // namespace
