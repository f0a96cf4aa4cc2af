//===- ErrorBound.h - forward rounding-error bounds, internal ---*- C++ -*-===//
//
// The builder behind `--ga-forward-error-bound`. Every value `v` of a step may
// have a *companion* `e(v)`: for a float value, a bound of `|v - exact(v)|`
// (same shape, f32, or f64 for f64 values); for an integer or i1 value, a
// flag that is true where `v` may differ between evaluations that round
// differently. A value without a companion is exact (arguments, constants,
// index arithmetic): no op is emitted for it.
//
// Invariant: the companions are built beside the original ops, which are
// kept (or rebuilt with the same operands and payloads), so the function
// still performs its own operations (lowered on its own, its sums may run in
// another order; the bound holds for every order).
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_TRANSFORMS_ERRORBOUND_ERRORBOUND_H
#define GA_LIB_TRANSFORMS_ERRORBOUND_ERRORBOUND_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::ga::error_bound {

/// The type of the companion of a value of type `type`: f32 (f64 for f64)
/// with the same shape for floats, i1 with the same shape for integers and
/// index, null for anything else.
Type getCompanionType(Type type);

/// The unit roundoff `2^-p` of float type `type` (p mantissa bits).
double getUnitRoundoff(FloatType type);

/// A reduction a `linalg.generic` payload is part of: its accumulators (the
/// payload's output block arguments) and the number of terms `K` of each
/// output element, as an f64 value defined before the op.
struct ReductionContext {
  llvm::SmallDenseSet<Value, 4> accumulators;
  Value numTerms;
};

/// Builds the companions of a function body in place.
class BoundBuilder {
public:
  /// The companion of `v`, or null when `v` is exact.
  Value lookup(Value v) const { return companions.lookup(v); }
  /// Records `companion` for `v` (nothing when it is null).
  void set(Value v, Value companion) {
    if (companion)
      companions[v] = companion;
  }
  /// The companion of `v`, or a zero bound (a false flag) of its companion
  /// type built at `b`'s insertion point.
  Value getOrZero(OpBuilder &b, Location loc, Value v);

  /// Builds the companions of every op of `block` but its terminator.
  LogicalResult processBlock(Block &block);

  /// Builds the companions of the results of `op`, an arith or math op on
  /// scalars, at `b`'s insertion point (after `op`). `reduction` is set when
  /// `op` is in the payload of a reduction.
  LogicalResult boundScalarOp(OpBuilder &b, Operation *op,
                              const ReductionContext *reduction);

  /// The flags of an integer or index result of `op` (a comparison of
  /// floats, a conversion from float, integer arithmetic on flagged values).
  LogicalResult boundFlagOp(OpBuilder &b, Operation *op);

  /// Number of ops that got a companion.
  unsigned numBounded = 0;

private:
  LogicalResult processOp(Operation *op);
  LogicalResult boundGeneric(linalg::GenericOp op);
  LogicalResult boundPayload(OpBuilder &b, Block &from, IRMapping &mapping,
                             const ReductionContext *reduction);
  LogicalResult boundFor(scf::ForOp op);
  LogicalResult boundIf(scf::IfOp op);
  LogicalResult boundDataMovement(Operation *op);
  /// Appends the companions of the operands of `terminator` to it.
  void extendTerminator(Operation *terminator, ArrayRef<bool> withCompanion);

  llvm::DenseMap<Value, Value> companions;
};

/// For each function of `module` named in `names` (every public function
/// with a body when `names` is empty), adds a copy named `<name><suffix>`
/// after it, without `ga.*` argument attributes (it is not a training step
/// of its own) and with its computations generalized
/// (generalizeComputations), and calls `build` on the copy. A name without
/// a function, a taken name, a function without a body or with several
/// blocks are errors.
LogicalResult
forEachAnalysisCopy(ModuleOp module, ArrayRef<std::string> names,
                    StringRef suffix,
                    llvm::function_ref<LogicalResult(func::FuncOp)> build);

/// Rewrites aggregate ops (linalg.softmax), named linalg ops and elementwise
/// ops on tensors of `func` into `linalg.generic`, without folding: the
/// function computes its results with the same operations. Errors are
/// located at the op.
LogicalResult generalizeComputations(func::FuncOp func);

/// Whether `op` only moves, slices or reshapes data (its companion is the
/// same op on the companions).
bool isDataMovement(Operation *op);

} // namespace mlir::ga::error_bound

#endif // GA_LIB_TRANSFORMS_ERRORBOUND_ERRORBOUND_H
