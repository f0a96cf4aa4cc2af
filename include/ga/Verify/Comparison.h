//===- Comparison.h - compare a result with its reference -------*- C++ -*-===//
//
// Floats are compared element by element to the sum of the two steps'
// derived rounding-error bounds (see `--ga-forward-error-bound`), or, when
// the user gives --rtol/--atol, to a tolerance relative to the largest
// reference magnitude (atol + rtol * max|ref|); NaN/Inf patterns exactly.
// Integers exactly, except where the bound flags them as derived from an
// ambiguous comparison of floats.
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_COMPARISON_H
#define GA_VERIFY_COMPARISON_H

#include "ga/Verify/Inputs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace mlir::ga::verify {

/// The comparison of one result of the rewritten step with the reference.
struct Comparison {
  unsigned index;
  std::string type;
  bool isFloat;
  double maxAbs = 0, maxRel = 0, maxRef = 0, tolerance = 0;
  /// The largest ratio of an element's error to its tolerance (<= 1 passes).
  double ratio = 0;
  /// Whether the tolerance is the derived per-element bound.
  bool derived = false;
  /// Elements without a finite bound (undetermined at this precision), and
  /// integer elements flagged as possibly different.
  int64_t undetermined = 0;
  int64_t mismatches = 0;
  int64_t worst = -1;
  SmallVector<int64_t> shape;
  std::string status; // PASS, FAIL
  std::string note;
  uint64_t seed = 0; // the input set of this comparison

  bool passed() const { return status == "PASS"; }
};

/// The relative tolerance of element kind `k` when none is given.
double defaultRtol(ElemKind k);

/// How many units in the last place of the least precise float type that
/// either step computes in a result may differ by (see
/// `getStepTolerance`).
constexpr double kStepToleranceUlps = 8;

/// The relative tolerance of a result of element kind `k` of two steps whose
/// least precise float type (over both) is `leastPrecise`: the larger of
/// `defaultRtol(k)` and `kStepToleranceUlps` ulps (2^(1 - p) for p mantissa
/// bits) of `leastPrecise`. An exact rewrite that accumulates a bf16 step in
/// f32 differs from the bf16 reference by the reference's own roundings: a
/// few bf16 ulps, whatever the result's type.
double getStepTolerance(ElemKind k, FloatType leastPrecise);

/// The float type with the fewest mantissa bits among the values of `func`
/// (arguments, op results, region arguments; element types of shaped
/// values), or null when it has none.
FloatType getLeastPreciseFloatType(Operation *func);

/// How many times its own error bound an element of an exact rewrite may
/// differ from the reference: the reference and the rewritten step each
/// differ from the exact result by at most the bound.
constexpr double kBoundsPerComparison = 2;

/// How many runs of the step with perturbed roundings (Monte Carlo
/// arithmetic, `--ga-perturb-roundings`) measure each element's spread.
constexpr unsigned kPerturbedRuns = 16;

/// How many times its spread (the largest distance of a perturbed run from
/// the reference) an element of an exact rewrite may differ from the
/// reference. The spread of 16 runs is below 0.5 sigma with probability
/// 0.383^16 = 2e-7 (sigma the standard deviation of the element's rounding
/// error), and a difference of two roundings passes 8 spreads of 0.5 sigma
/// with probability 5e-3: a false failure per element is below 1e-9.
constexpr double kSpreadsPerComparison = 8;

/// The derived tolerance of one result.
struct DerivedTolerance {
  /// The rigorous bound per element (`@f_error_bound`), or for an integer
  /// result a flag per element that may differ.
  const HostArray *bound = nullptr;
  /// Per float element, the largest |perturbed - reference| over the
  /// perturbed runs (empty for integers).
  std::vector<double> spread;

  /// The tolerance of float element `i`: the smaller of
  /// kBoundsPerComparison bounds and kSpreadsPerComparison spreads.
  double at(int64_t i) const;
};

/// Compares result `index` (of `slot`) of the rewritten step, `got`, with the
/// reference's, `ref`: with `derived`, each element to its derived
/// tolerance; without it, to `atol + rtol * max|ref|` (`rtol` overrides
/// defaultRtol).
Comparison compareResult(unsigned index, const Slot &slot, const HostArray &ref,
                         const HostArray &got, const DerivedTolerance *derived,
                         std::optional<double> rtol, double atol);

/// Whether `a` is a worse outcome than `b`: a failure, or a larger relative
/// error.
bool isWorse(const Comparison &a, const Comparison &b);

/// The multi-index `[i,j,...]` of row-major element `linear` of `shape`.
std::string formatIndex(int64_t linear, ArrayRef<int64_t> shape);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_COMPARISON_H
