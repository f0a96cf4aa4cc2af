//===- DuplicateSharedFills.cpp - a fill per use before bufferization -----===//
//
// --ga-duplicate-shared-fills: gives every use of a fill on tensors its own
// fill, so that bufferization writes each in place instead of copying one
// fill per writer.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "ga/Utils/Reductions.h"

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
      // Before the user; a user inside a linalg body gets its copy before
      // that linalg op (only scalar ops belong in a body).
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      numCopies += duplicateForUses(
          fill, uses, /*usesPerCopy=*/1, keepFirst, [&](OpOperand &use) {
            Operation *user = use.getOwner();
            Operation *parent = user->getParentOp();
            if (isa<linalg::LinalgOp>(parent))
              return fill->getBlock()->findAncestorOpInBlock(*parent);
            return user;
          });
    }
  }
};

} // namespace
