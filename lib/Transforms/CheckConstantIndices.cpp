//===- CheckConstantIndices.cpp - refuse out-of-range dimension indices ---===//
//
// The first pass of every ga pipeline: a `tensor.dim` / `memref.dim` whose
// constant index lies outside the rank of its source, or a chain of casts
// whose static shapes disagree, is undefined at run time and is refused at
// its location before any pass indexes a shape with it or folds it
// (include/ga/Utils/ConstantIndices.h reads and checks the index).
//
//===----------------------------------------------------------------------===//

#include "ga/IR/Diagnostics.h"
#include "ga/Transforms/Passes.h"

#include "ga/Utils/ConstantIndices.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CastInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CHECKCONSTANTINDICES
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// The first value of the chain of casts that ends in `v`.
static Value getCastRoot(Value v) {
  while (auto cast = v.getDefiningOp<CastOpInterface>()) {
    if (cast->getNumOperands() != 1)
      break;
    v = cast->getOperand(0);
  }
  return v;
}

/// Refuses a `tensor.cast` / `memref.cast` whose static result shape
/// contradicts the static shape of the value its chain of casts starts from
/// (`tensor<8x8xf32>` to `tensor<?x?xf32>` to `tensor<8x1xf32>`): each cast
/// alone verifies, the chain is undefined at run time, and canonicalization
/// folds it into ops that then fail verification far from the cause. (A
/// frontend's lowering of a grouped convolution's gradient produced one.)
static LogicalResult checkCastChain(Operation *op) {
  auto result = dyn_cast<ShapedType>(op->getResult(0).getType());
  Value root = getCastRoot(op->getOperand(0));
  auto source = dyn_cast<ShapedType>(root.getType());
  if (!result || !source || !result.hasRank() || !source.hasRank())
    return success();
  if (result.getRank() != source.getRank())
    return op->emitOpError()
           << DiagnosticCode::ShapeMismatch << "casts a value of rank "
           << source.getRank() << " (" << source << ") to rank "
           << result.getRank() << " (undefined at run time)";
  for (int64_t d = 0, e = result.getRank(); d < e; ++d) {
    int64_t from = source.getDimSize(d), to = result.getDimSize(d);
    if (ShapedType::isDynamic(from) || ShapedType::isDynamic(to) || from == to)
      continue;
    return op->emitOpError()
           << DiagnosticCode::ShapeMismatch << "casts " << source << " to "
           << result << ": dimension " << d << " is " << from << ", not " << to
           << " (the shapes disagree; undefined at run time)";
  }
  return success();
}

namespace {
struct CheckConstantIndicesPass
    : public ga::impl::CheckConstantIndicesBase<CheckConstantIndicesPass> {
  void runOnOperation() override {
    bool refused = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<tensor::CastOp, memref::CastOp>(op)) {
        ++numCasts;
        refused |= failed(checkCastChain(op));
        return;
      }
      if (!isa<tensor::DimOp, memref::DimOp>(op))
        return;
      ++numChecked;
      // Every bad index is reported, not only the first.
      refused |= failed(checkDimIndex(op));
    });
    if (refused)
      signalPassFailure();
  }
};
} // namespace
