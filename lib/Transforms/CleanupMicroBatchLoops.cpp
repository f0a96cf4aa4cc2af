//===- CleanupMicroBatchLoops.cpp - dead code and loop invariants ---------===//

#include "ga/Transforms/Passes.h"

#include "ga/Utils/IRUtils.h"

#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CLEANUPMICROBATCHLOOPS
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct CleanupMicroBatchLoopsPass
    : public ga::impl::CleanupMicroBatchLoopsBase<CleanupMicroBatchLoopsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration())
      return;
    int64_t erased = 0;
    for (Block &block : func.getBody())
      erased += eraseDeadOps(block);
    // Hoist from inner loops first, so that invariants bubble outwards.
    int64_t hoisted = 0;
    func.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      hoisted += moveLoopInvariantCode(
          &loop.getRegion(),
          [&](Value value, Region *) {
            return loop.isDefinedOutsideOfLoop(value);
          },
          [&](Operation *op, Region *) {
            // Destination-style ops stay: a hoisted `linalg.fill` would be
            // copied into a fresh buffer on every iteration after
            // bufferization instead of being written in place.
            return isMemoryEffectFree(op) &&
                   !isa<DestinationStyleOpInterface>(op) &&
                   op->getNumRegions() == 0;
          },
          [&](Operation *op, Region *) { loop.moveOutOfLoop(op); });
    });
    for (Block &block : func.getBody())
      erased += eraseDeadOps(block);
    numErased += erased;
    numHoisted += hoisted;
  }
};
} // namespace
