//===- CheckConstantIndices.cpp - refuse out-of-range dimension indices ---===//
//
// The first pass of every ga pipeline: a `tensor.dim` / `memref.dim` whose
// constant index lies outside the rank of its source is undefined at run time
// and is refused at its location before any pass indexes a shape with it
// (include/ga/Utils/ConstantIndices.h reads and checks the index).
//
//===----------------------------------------------------------------------===//

#include "ga/Transforms/Passes.h"

#include "ga/Utils/ConstantIndices.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CHECKCONSTANTINDICES
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct CheckConstantIndicesPass
    : public ga::impl::CheckConstantIndicesBase<CheckConstantIndicesPass> {
  void runOnOperation() override {
    bool refused = false;
    getOperation()->walk([&](Operation *op) {
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
