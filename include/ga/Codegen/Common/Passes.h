//===- Passes.h - passes shared by the lowerings ----------------*- C++ -*-===//
//
// Steps that both --ga-lower-to-cpu and --ga-lower-to-nvvm take (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_COMMON_PASSES_H
#define GA_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir::ga {

/// Which ops ga-duplicate-shared-fills splits.
enum class FillKind {
  /// `linalg.fill` only.
  Named,
  /// Every fill-like linalg op (see `isFillLike`): also the generics that
  /// `linalg-morph-ops` makes of `linalg.fill` when a pipeline generalizes
  /// named ops.
  FillLike,
};

/// Where ga-duplicate-shared-fills puts the fills.
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

/// Gives consecutive groups of `usesPerCopy` of `uses` (uses of `op`'s only
/// result) a clone of `op` each: every group but the first when `keepFirst`
/// (the first keeps `op`), every group otherwise (and then erases `op`,
/// which `uses` must then hold all uses of). The clone of a group is built
/// right before the op that `placeFor` returns for the group's first use.
/// `op` must be free of side effects, so that a clone means the same as the
/// original (the rule of ga-duplicate-shared-fills and
/// ga-duplicate-shared-empties). Returns the number of clones made.
unsigned
duplicateForUses(Operation *op, ArrayRef<OpOperand *> uses,
                 unsigned usesPerCopy, bool keepFirst,
                 llvm::function_ref<Operation *(OpOperand &)> placeFor);

#define GEN_PASS_DECL
#include "ga/Codegen/Common/Passes.h.inc"

/// ga-verify-lowered with `allowed` deciding which ops may be left, in
/// addition to the options' dialects and ops.
std::unique_ptr<Pass>
createVerifyLowered(const VerifyLoweredOptions &options,
                    std::function<bool(Operation *)> allowed);

#define GEN_PASS_REGISTRATION
#include "ga/Codegen/Common/Passes.h.inc"

} // namespace mlir::ga

#endif // GA_CODEGEN_COMMON_PASSES_H
