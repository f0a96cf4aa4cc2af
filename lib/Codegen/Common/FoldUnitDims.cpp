//===- FoldUnitDims.cpp - unit dimensions out of element-wise work --------===//
//
// --ga-fold-unit-dims: upstream's folding of unit-extent loop and operand
// dimensions of linalg generics on tensors (reassociative reshapes around the
// rank-reduced op), before element-wise fusion, so that a `keepdim`
// reduction (output map `(d0, d1, 0)`) and a broadcast written into a unit
// dimension and collapsed after it (`2x8x1 -> 2x8x1x16 -> 2x8x16`) become
// ops on the same iteration space as their neighbours: fusion can then merge
// them, and the row kernels of --ga-linalg-to-gpu-loops (projected
// permutations only) can group a reduction with its consumers. Left alone:
// library products (their layout is the library's), ops that update a
// loop-carried accumulator (their init stays the accumulator itself), and
// ops whose result is written into a destination (a reshape there would
// cost a copy at bufferization).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/Utils/Gemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SubsetOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ga {
#define GEN_PASS_DEF_FOLDUNITDIMS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Why an op keeps its unit dimensions (or None: they may be folded).
enum class Kept { None, Product, Accumulator, Destination };

Kept whyKept(linalg::GenericOp op) {
  if (op->hasAttr(kLibraryProductAttrName))
    return Kept::Product;
  // An init carried by a loop is an accumulator updated in place: its op
  // must keep writing that tensor, not a reshape of it.
  if (llvm::any_of(op.getDpsInits(), [](Value init) {
        auto arg = dyn_cast<BlockArgument>(init);
        return arg && isa<LoopLikeOpInterface>(arg.getOwner()->getParentOp());
      }))
    return Kept::Accumulator;
  bool writesIntoDestination = llvm::any_of(op->getUses(), [](OpOperand &use) {
    auto insertion = dyn_cast<SubsetInsertionOpInterface>(use.getOwner());
    return insertion && &insertion.getSourceOperand() == &use;
  });
  return writesIntoDestination ? Kept::Destination : Kept::None;
}

/// True when `op` has a loop of extent 1 (what the folding removes).
bool hasUnitLoop(linalg::GenericOp op) {
  return llvm::is_contained(op.getStaticLoopRanges(), 1);
}

struct FoldUnitDimsPass : public ga::impl::FoldUnitDimsBase<FoldUnitDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureTensorSemantics() || !hasUnitLoop(op))
        return;
      switch (whyKept(op)) {
      case Kept::Product:
        ++numKeptProducts;
        break;
      case Kept::Accumulator:
        ++numKeptAccumulators;
        break;
      case Kept::Destination:
        ++numKeptDestinations;
        break;
      case Kept::None:
        ++numFolded;
        break;
      }
    });
    linalg::ControlDropUnitDims control;
    control.rankReductionStrategy = linalg::ControlDropUnitDims::
        RankReductionStrategy::ReassociativeReshape;
    control.controlFn = [](Operation *op) -> SmallVector<unsigned> {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      // Tensors only: on buffers, upstream would put reshapes (views)
      // around an op that bufferization already placed.
      if (!generic || !generic.hasPureTensorSemantics() ||
          whyKept(generic) != Kept::None)
        return {};
      return llvm::to_vector(llvm::seq<unsigned>(0, generic.getNumLoops()));
    };
    RewritePatternSet patterns(context);
    // Not upstream's pass: it also moves inits that a payload reads to the
    // inputs (populateMoveInitOperandsToInputPattern), which would turn an
    // in-place update into a copy.
    linalg::populateFoldUnitExtentDimsPatterns(patterns, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
