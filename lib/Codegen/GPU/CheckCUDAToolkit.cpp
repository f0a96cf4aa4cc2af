//===- CheckCUDAToolkit.cpp - libdevice must be findable ------------------===//
//
// --ga-check-cuda-toolkit: kernels that use math functions link libdevice,
// which NVVM serialization finds only through CUDA_ROOT, CUDA_HOME or
// CUDA_PATH. Say so at the first such op instead of letting ptxas fail later
// with an unresolved `__nv_*` function.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"

#include <cstdlib>

namespace mlir::ga {
#define GEN_PASS_DEF_CHECKCUDATOOLKIT
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct CheckCUDAToolkitPass
    : public ga::impl::CheckCUDAToolkitBase<CheckCUDAToolkitPass> {
  void runOnOperation() override {
    for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
      if (const char *v = std::getenv(var); v && *v)
        return;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      WalkResult found = module.walk([&](Operation *op) {
        if (op->getName().getDialectNamespace() != "math")
          return WalkResult::advance();
        // The payload ops of named linalg ops have unknown locations: point
        // at the closest enclosing op that has one.
        Operation *at = op;
        while (isa<UnknownLoc>(at->getLoc()) && at->getParentOp())
          at = at->getParentOp();
        at->emitError() << "this kernel calls libdevice for '" << op->getName()
                        << "': set CUDA_HOME (or CUDA_ROOT, CUDA_PATH) to the "
                           "CUDA toolkit so that NVVM serialization can link "
                           "nvvm/libdevice/libdevice.10.bc";
        return WalkResult::interrupt();
      });
      if (found.wasInterrupted()) {
        signalPassFailure();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  }
};
} // namespace
