//===- MarkAccumulatingOps.cpp - mark the ops that update accumulators ----===//
//
// --ga-mark-accumulating-ops: `ga.accumulates` on every linalg op that
// updates a tensor carried by an `scf.for` (a micro-batch accumulator), so
// that the kernel (or library call) it becomes is recognizable by name.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::ga {
#define GEN_PASS_DEF_MARKACCUMULATINGOPS
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct MarkAccumulatingOpsPass
    : public ga::impl::MarkAccumulatingOpsBase<MarkAccumulatingOpsPass> {
  void runOnOperation() override {
    UnitAttr unit = UnitAttr::get(&getContext());
    getOperation().walk([&](scf::ForOp loop) {
      for (BlockArgument acc : loop.getRegionIterArgs()) {
        if (!isa<RankedTensorType>(acc.getType()))
          continue;
        for (OpOperand &use : acc.getUses()) {
          auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
          if (!op || !op.isDpsInit(&use) ||
              op->hasAttr(GADialect::getAccumulatesAttrName()))
            continue;
          op->setAttr(GADialect::getAccumulatesAttrName(), unit);
          ++numMarked;
        }
      }
    });
  }
};
} // namespace
