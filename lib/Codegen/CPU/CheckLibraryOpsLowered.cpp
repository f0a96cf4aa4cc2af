//===- CheckLibraryOpsLowered.cpp - no GPU library op reaches the CPU -----===//
//
// --ga-check-library-ops-lowered: the ops of GALibraryOps.td are lowered by
// --ga-lower-library-ops only. The CPU lowering checks for them first, so
// that a step that skipped that pass is refused at the op, with the pass to
// run, rather than by a conversion cast that upstream cannot reconcile.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"
#include "ga/IR/Diagnostics.h"
#include "ga/IR/GALibraryOps.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CHECKLIBRARYOPSLOWERED
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether `op` is one of the library ops (every op of GALibraryOps.td, so
/// that an op added there is covered without a change here).
template <typename... OpTys> static bool isLibraryOp(Operation *op) {
  return isa<OpTys...>(op);
}

struct CheckLibraryOpsLoweredPass
    : public ga::impl::CheckLibraryOpsLoweredBase<CheckLibraryOpsLoweredPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](Operation *op) {
      if (!isLibraryOp<
#define GET_OP_LIST
#include "ga/IR/GALibraryOps.cpp.inc"
              >(op))
        return WalkResult::advance();
      op->emitOpError() << DiagnosticCode::NotLowered
                        << "is a library call that --ga-lower-to-cpu does not "
                           "lower: run --ga-lower-library-ops first";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
