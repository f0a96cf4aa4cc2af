//===- ReuseCarriedBuffers.cpp - loop-carried values into their tensor ----===//
//
// --ga-reuse-carried-buffers: a value that an scf.for yields to its next
// iteration, computed by a destination-style op into a fresh tensor.empty
// it does not read, is computed into the iteration argument it replaces
// instead. The values are the same; one-shot bufferization can then keep
// one buffer per carried value instead of an allocation per iteration.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {
#define GEN_PASS_DEF_REUSECARRIEDBUFFERS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct ReuseCarriedBuffersPass
    : public ga::impl::ReuseCarriedBuffersBase<ReuseCarriedBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([&](scf::ForOp loop) {
      for (auto [arg, yielded] :
           llvm::zip_equal(loop.getRegionIterArgs(), loop.getYieldedValues()))
        if (OpOperand *init = reusableInit(loop, arg, yielded)) {
          init->set(arg);
          ++numReused;
        }
    });
  }

  /// The init operand of the op that computes `yielded` that can be `arg`
  /// instead (see Passes.td), or null.
  static OpOperand *reusableInit(scf::ForOp loop, BlockArgument arg,
                                 Value yielded) {
    auto result = dyn_cast<OpResult>(yielded);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    // Equal static types: an empty of the same type has the same sizes.
    if (!result || !type || !type.hasStaticShape() || yielded.getType() != type)
      return nullptr;
    Operation *op = result.getOwner();
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (!dps || op->getBlock() != loop.getBody())
      return nullptr;
    OpOperand *init = dps.getTiedOpOperand(result);
    if (!init || !init->get().getDefiningOp<tensor::EmptyOp>())
      return nullptr;
    // An init the op reads is not an empty one's equivalent. Ops that are
    // not LinalgOps do not say whether they read it: left alone.
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp.payloadUsesValueFromOperand(init))
      return nullptr;
    // Every read of the old value before the op: the op may then write the
    // carried buffer without a copy of it.
    for (Operation *user : arg.getUsers()) {
      Operation *ancestor = loop.getBody()->findAncestorOpInBlock(*user);
      if (!ancestor || ancestor == op || !ancestor->isBeforeInBlock(op))
        return nullptr;
    }
    return init;
  }
};

} // namespace
