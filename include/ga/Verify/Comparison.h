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
