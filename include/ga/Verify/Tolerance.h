//===- Tolerance.h - tolerances derived from the step -----------*- C++ -*-===//
//
// What ga-verify compares each element with when no --rtol/--atol is given:
// the smaller of a rigorous bound of the reference's rounding error
// (`--ga-forward-error-bound`) and a multiple of the spread of runs with
// perturbed roundings (`--ga-perturb-roundings`), both derived from the step
// as written, on the same inputs (tools/ga-verify/README.md).
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_TOLERANCE_H
#define GA_VERIFY_TOLERANCE_H

#include "ga/Verify/Comparison.h"
#include "ga/Verify/Runner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ga::verify {

struct VerifyOptions;
struct VerifyReport;

/// What derives the tolerances: the step as written with a rigorous bound of
/// every result's rounding error (`--ga-forward-error-bound`) and with its
/// roundings perturbed (`--ga-perturb-roundings`), called by one function,
/// `@__ga_verify_analysis(args..., seed) -> (bounds..., perturbed...)`.
/// Compiled only when some result is not bitwise equal to the reference's.
struct AnalysisStep {
  OwningOpRef<ModuleOp> module;
  SmallVector<Slot> results;
  std::optional<Compiled> compiled;
  /// Why the step has no rigorous bound (the spread alone is then the
  /// tolerance); empty when it has one.
  std::string noBound;
};

/// Derives the analysis step of `step` from a copy of `original` (before
/// any entry wrapper is added). A step the analyses cannot follow is
/// refused with the located diagnostic of the op.
llvm::Expected<AnalysisStep>
deriveAnalysisStep(MLIRContext &context, ModuleOp original, func::FuncOp step);

/// The derived tolerances of the reference's results `ref` on `inputs`, in
/// `derived` (whose bounds point into the returned arrays, empty without a
/// rigorous bound): the bounds, and
/// the spread of kPerturbedRuns perturbed runs. Compiles the analysis step
/// on first use (its compile time goes to `run`).
llvm::Expected<std::vector<HostArray>>
runAnalysisStep(AnalysisStep &analysis, const std::vector<HostArray> &inputs,
                const std::vector<HostArray> &ref,
                std::vector<DerivedTolerance> &derived,
                const VerifyOptions &options, VerifyReport &run);

/// The self-test of --plant-error: adds `multiple` times its tolerance to the
/// element of `got` whose reference is largest in magnitude among those with
/// a finite, positive tolerance. Returns what was planted, for the report.
std::string plantError(const HostArray &ref, HostArray &got,
                       const DerivedTolerance &derived, double multiple);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_TOLERANCE_H
