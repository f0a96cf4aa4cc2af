//===- DuplicateSharedFills.cpp - a fill per use before bufferization -----===//
//
// --ga-duplicate-shared-fills: gives every use of a fill on tensors its own
// fill, so that bufferization writes each in place instead of copying one
// fill per writer.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "ga/Analysis/Reductions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::ga {
#define GEN_PASS_DEF_DUPLICATESHAREDFILLS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct DuplicateSharedFillsPass
    : public ga::impl::DuplicateSharedFillsBase<DuplicateSharedFillsPass> {
  using Base::Base;

  bool isFill(linalg::LinalgOp op) const {
    if (!op.hasPureTensorSemantics())
      return false;
    if (kind == FillKind::Named)
      return isa<linalg::FillOp>(op);
    return isFillLike(op);
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> fills;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isFill(op) && !op->getResult(0).use_empty())
        fills.push_back(op);
    });
    bool keepFirst = placement == FillPlacement::KeepFirstCopyAtUser;
    for (linalg::LinalgOp fill : fills) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      OpBuilder builder(fill);
      for (OpOperand *use : llvm::drop_begin(uses, keepFirst ? 1 : 0)) {
        Operation *user = use->getOwner();
        // Not into a linalg body: there only scalar ops belong.
        Operation *parent = user->getParentOp();
        if (isa<linalg::LinalgOp>(parent))
          user = fill->getBlock()->findAncestorOpInBlock(*parent);
        builder.setInsertionPoint(user ? user : fill.getOperation());
        Operation *copy = builder.clone(*fill);
        use->set(copy->getResult(0));
        ++numCopies;
      }
      if (!keepFirst)
        fill->erase();
    }
  }
};

} // namespace
