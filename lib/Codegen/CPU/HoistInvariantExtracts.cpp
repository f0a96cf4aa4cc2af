//===- HoistInvariantExtracts.cpp - scalar reads out of linalg bodies -----===//
//
// --ga-hoist-invariant-extracts: moves `tensor.extract`s of values defined
// outside a linalg op out of its body, so that they are read once and the
// body can be vectorized.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {
#define GEN_PASS_DEF_HOISTINVARIANTEXTRACTS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct HoistInvariantExtractsPass
    : public ga::impl::HoistInvariantExtractsBase<HoistInvariantExtractsPass> {
  void runOnOperation() override {
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      for (Block &block : op->getRegion(0))
        for (Operation &inner : llvm::make_early_inc_range(block))
          if (isa<tensor::ExtractOp>(inner) &&
              llvm::all_of(inner.getOperands(), [&](Value v) {
                return !op->isAncestor(v.getParentBlock()->getParentOp());
              })) {
            inner.moveBefore(op);
            ++numHoisted;
          }
    });
  }
};

} // namespace
