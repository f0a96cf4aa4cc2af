//===- PeelFirstAccumulation.cpp - first micro-batch without zeroing ------===//
//
// --ga-peel-first-accumulation: peels the first iteration of loops that
// accumulate matrix products into zero-filled loop-carried values, so that
// the first product writes into the zero fill (beta = 0 with a BLAS).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_PEELFIRSTACCUMULATION
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct PeelFirstAccumulationPass
    : public ga::impl::PeelFirstAccumulationBase<PeelFirstAccumulationPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (accumulatesProductIntoZeros(loop))
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      rewriter.setInsertionPoint(loop);
      scf::ForOp first;
      if (succeeded(scf::peelForLoopFirstIteration(rewriter, loop, first)))
        ++numPeeled;
    }
  }

  /// Whether the body of `loop` has a tensor of a run-time size (a
  /// data-parallel rank's micro-batch). Peeled, the first micro-batch's
  /// temporaries would be held through the loop (the function's block
  /// frees its buffers at its end; in static storage where the peeled
  /// iteration's sizes fold to constants) beside the loop's own, which
  /// --ga-share-buffers cannot give their storage (it takes static shapes
  /// only): memory for the saving of one zero fill per accumulator.
  static bool computesRunTimeSizes(scf::ForOp loop) {
    WalkResult found = loop.getBody()->walk([](Operation *op) {
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type);
            tensor && !tensor.hasStaticShape())
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return found.wasInterrupted();
  }

  /// Whether `loop` runs at least twice (statically), computes on tensors
  /// of static shapes only, and one of its loop-carried values starts as a
  /// zero `linalg.fill` and is the output of a contraction in the body.
  static bool accumulatesProductIntoZeros(scf::ForOp loop) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips || trips->ult(2) || computesRunTimeSizes(loop))
      return false;
    for (auto [init, iterArg] :
         llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs())) {
      auto fill = init.getDefiningOp<linalg::FillOp>();
      if (!fill || !isZeroFill(fill))
        continue;
      for (OpOperand &use : iterArg.getUses()) {
        auto product = dyn_cast<linalg::LinalgOp>(use.getOwner());
        if (product && product.isDpsInit(&use) &&
            linalg::isaContractionOpInterface(product))
          return true;
      }
    }
    return false;
  }
};

} // namespace
