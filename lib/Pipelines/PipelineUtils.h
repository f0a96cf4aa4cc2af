//===- PipelineUtils.h - helper passes shared by the lowerings --*- C++ -*-===//
//
// Helper passes that both --ga-lower-to-cpu and --ga-lower-to-nvvm add: the
// preparation of function signatures for the LLVM dialect and the splitting
// of shared fills before bufferization. They are steps of those pipelines,
// not transformations of their own, and are neither registered with ga-opt
// nor installed. Internal to lib/Pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_PIPELINES_PIPELINEUTILS_H
#define GA_LIB_PIPELINES_PIPELINEUTILS_H

#include "mlir/Pass/Pass.h"

#include <functional>
#include <memory>

namespace mlir::ga::detail {

/// A module pass that prepares function signatures for the LLVM dialect:
/// with `cInterface`, requests C-interface wrappers
/// (`llvm.emit_c_interface`) on every public function definition; always
/// drops the `ga.*` argument attributes, which mean nothing below the tensor
/// level.
std::unique_ptr<Pass> createPrepareFunctionsForLLVMPass(bool cInterface);

/// Which ops createDuplicateSharedFillsPass splits.
enum class FillKind {
  /// `linalg.fill` only.
  Named,
  /// Every fill-like linalg op (see `isFillLike`): also the generics that
  /// `linalg-morph-ops` makes of `linalg.fill` when a pipeline generalizes
  /// named ops.
  FillLike,
};

/// Where createDuplicateSharedFillsPass puts the fills.
enum class FillPlacement {
  /// Every use gets a copy right before its user, inside the user's region
  /// (a use in a loop body is then a fill per iteration into a buffer of its
  /// own, not a copy per iteration of a fill hoisted out of the loop); the
  /// fill itself is erased. A zero fill next to a matrix product's output can
  /// be folded into the product after bufferization (beta = 0 of the CPU's
  /// BLAS lowering).
  NextToEachUser,
  /// The first use keeps the fill where it is; every other use gets a copy
  /// right before its user, also inside the user's region. A use inside a
  /// loop then costs a fill per iteration instead of a copy of the hoisted
  /// fill per iteration (a fill kernel instead of a copy kernel on the GPU);
  /// a second read-only user costs one more fill.
  KeepFirstCopyAtUser,
};

/// A function pass that gives every use of a fill on tensors its own fill
/// (which ops count as fills: `kind`; where the fills go: `placement`). One
/// fill that several ops write into (the inits of several reductions, the
/// accumulators of a micro-batch loop) must be copied once per writer by
/// bufferization; a fill per use is written in place instead: a cheaper
/// write, no read and no copy.
std::unique_ptr<Pass> createDuplicateSharedFillsPass(FillKind kind,
                                                     FillPlacement placement);

/// A module pass that checks the contract of a pipeline's output: every op
/// in the module satisfies `allowed`. The first op that does not is reported
/// at its location as "'<op>' was not lowered <by what>" and the pass fails,
/// so that a partial conversion never goes unnoticed.
std::unique_ptr<Pass>
createVerifyLoweredPass(StringRef argument, StringRef byWhat,
                        std::function<bool(Operation *)> allowed);

} // namespace mlir::ga::detail

#endif // GA_LIB_PIPELINES_PIPELINEUTILS_H
