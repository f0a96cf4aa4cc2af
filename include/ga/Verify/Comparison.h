//===- Comparison.h - compare a result with its reference -------*- C++ -*-===//
//
// Floats are compared to a tolerance relative to the largest reference
// magnitude (atol + rtol * max|ref|, NaN/Inf patterns exactly); integers
// exactly.
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

/// Compares result `index` (of `slot`) of the rewritten step, `got`, with the
/// reference's, `ref`; `rtol` overrides defaultRtol.
Comparison compareResult(unsigned index, const Slot &slot, const HostArray &ref,
                         const HostArray &got, std::optional<double> rtol,
                         double atol);

/// Whether `a` is a worse outcome than `b`: a failure, or a larger relative
/// error.
bool isWorse(const Comparison &a, const Comparison &b);

/// The multi-index `[i,j,...]` of row-major element `linear` of `shape`.
std::string formatIndex(int64_t linear, ArrayRef<int64_t> shape);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_COMPARISON_H
