//===- DuplicateSharedEmpties.cpp - bounded sharing of tensor.empty -------===//
//
// --ga-duplicate-shared-empties: splits the uses of a tensor.empty into
// groups of at most `max-uses`, each with its own tensor.empty, so that
// one-shot bufferization analyses bounded alias sets instead of one set of
// every writer of a type (time quadratic in the writers).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {
#define GEN_PASS_DEF_DUPLICATESHAREDEMPTIES
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct DuplicateSharedEmptiesPass
    : public ga::impl::DuplicateSharedEmptiesBase<DuplicateSharedEmptiesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxUses == 0) {
      getOperation().emitError()
          << "ga-duplicate-shared-empties: max-uses must be at least 1";
      return signalPassFailure();
    }
    // Program order (pre-order: an op before the ops of its regions), to
    // group the uses that follow each other.
    DenseMap<Operation *, unsigned> order;
    SmallVector<tensor::EmptyOp> shared;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      order[op] = order.size();
      auto empty = dyn_cast<tensor::EmptyOp>(op);
      if (empty && empty->getResult(0).hasNUsesOrMore(maxUses + 1))
        shared.push_back(empty);
    });
    for (tensor::EmptyOp empty : shared) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          empty->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
        return order.lookup(a->getOwner()) < order.lookup(b->getOwner());
      });
      Block *block = empty->getBlock();
      // Each group's empty goes where the original could have been: in its
      // block, right before the op that holds (or whose regions hold) the
      // group's first use; an allocation never moves into a loop or a body.
      numCopies += duplicateForUses(
          empty, uses, maxUses, /*keepFirst=*/true, [&](OpOperand &use) {
            return block->findAncestorOpInBlock(*use.getOwner());
          });
      ++numShared;
    }
  }
};

} // namespace
