//===- ReuseReplacedBuffers.cpp - values into the tensors they replace ----===//
//
// --ga-reuse-replaced-buffers: a value that replaces a tensor (yielded to a
// loop's next iteration in place of its iteration argument, or materialized
// in a destination), computed by a destination-style op into a fresh
// tensor.empty it does not read, is computed into the replaced tensor
// instead. The values are the same; one-shot bufferization can then write
// it into the replaced buffer instead of a new allocation.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {
#define GEN_PASS_DEF_REUSEREPLACEDBUFFERS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether `op` reads `replaced` only element-wise: every input operand
/// that is `replaced` has the indexing map of `init`, and every iterator is
/// parallel (so each element is read before the same iteration writes it).
bool readsOnlyElementwise(linalg::LinalgOp op, OpOperand *init,
                          Value replaced) {
  AffineMap initMap = op.getMatchingIndexingMap(init);
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() == replaced &&
        (op.getMatchingIndexingMap(input) != initMap ||
         op.getNumParallelLoops() != op.getNumLoops()))
      return false;
  return true;
}

/// The init operand to set to `replaced` so that the op that computes
/// `value` writes into it (see Passes.td), or null: the op's own init when
/// it is a tensor.empty its payload does not read, or the init of the
/// linalg.fill of a tensor.empty that only the op reads (a product that
/// accumulates into a zero fill). `block` holds the op and the reads of
/// `replaced` that matter; `replacement` is the op that replaces `replaced`
/// by `value` (the yield, the materialization).
OpOperand *reusableInit(Value value, Value replaced, Block *block,
                        Operation *replacement) {
  auto result = dyn_cast<OpResult>(value);
  auto type = dyn_cast<RankedTensorType>(replaced.getType());
  // Equal static types: an empty of the same type has the same sizes.
  if (!result || !type || !type.hasStaticShape() || value.getType() != type)
    return nullptr;
  auto op = dyn_cast<linalg::LinalgOp>(result.getOwner());
  if (!op || op->getBlock() != block)
    return nullptr;
  OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
  // The op that writes the buffer first: the op, or the fill it reads.
  Operation *writer = op;
  OpOperand *target = init;
  if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
      op.payloadUsesValueFromOperand(init)) {
    // An init the op reads is an empty's equivalent only as a fill of one
    // that nothing else reads.
    auto fill = init->get().getDefiningOp<linalg::FillOp>();
    if (!fill || fill->getBlock() != block || !fill->hasOneUse() ||
        !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return nullptr;
    writer = fill;
    target = &fill.getOutputsMutable()[0];
  }
  // Every other read of the old value before the writer: it may then
  // write its buffer without a copy of it.
  for (OpOperand &use : replaced.getUses()) {
    Operation *user = block->findAncestorOpInBlock(*use.getOwner());
    if (user == replacement)
      continue;
    if (user == op.getOperation()) {
      // Read while a fill before it overwrote it: a copy would be needed.
      if (writer != op || !readsOnlyElementwise(op, init, replaced))
        return nullptr;
      continue;
    }
    if (!user || !user->isBeforeInBlock(writer))
      return nullptr;
  }
  return target;
}

struct ReuseReplacedBuffersPass
    : public ga::impl::ReuseReplacedBuffersBase<ReuseReplacedBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        for (auto [arg, yielded] :
             llvm::zip_equal(loop.getRegionIterArgs(), loop.getYieldedValues()))
          if (OpOperand *init = reusableInit(yielded, arg, loop.getBody(),
                                             loop.getBody()->getTerminator())) {
            init->set(arg);
            ++numCarried;
          }
      } else if (auto materialize =
                     dyn_cast<bufferization::MaterializeInDestinationOp>(op)) {
        Value dest = materialize.getDest();
        if (!isa<TensorType>(dest.getType()))
          return;
        if (OpOperand *init = reusableInit(materialize.getSource(), dest,
                                           op->getBlock(), op)) {
          init->set(dest);
          ++numMaterialized;
        }
      }
    });
  }
};

} // namespace
