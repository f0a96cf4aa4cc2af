//===- Comparison.cpp - compare a result with its reference ---------------===//

#include "ga/Verify/Comparison.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ga::verify;

double mlir::ga::verify::defaultRtol(ElemKind k) {
  switch (k) {
  case ElemKind::F64:
    return 1e-12;
  case ElemKind::F16:
    return 3e-3;
  case ElemKind::BF16:
    return 2e-2;
  default:
    return 1e-5;
  }
}

double mlir::ga::verify::getStepTolerance(ElemKind k, FloatType leastPrecise) {
  double rtol = defaultRtol(k);
  if (!leastPrecise)
    return rtol;
  double ulp =
      std::ldexp(1.0, 1 - static_cast<int>(leastPrecise.getFPMantissaWidth()));
  return std::max(rtol, kStepToleranceUlps * ulp);
}

FloatType mlir::ga::verify::getLeastPreciseFloatType(Operation *func) {
  FloatType least;
  auto note = [&](Type type) {
    if (auto shaped = dyn_cast<ShapedType>(type))
      type = shaped.getElementType();
    auto floatType = dyn_cast<FloatType>(type);
    if (floatType &&
        (!least || floatType.getFPMantissaWidth() < least.getFPMantissaWidth()))
      least = floatType;
  };
  func->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      note(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          note(type);
  });
  return least;
}

/// The largest finite |element| of `a`.
static double maxFiniteMagnitude(const HostArray &a) {
  double m = 0;
  for (int64_t i = 0, n = a.numElements(); i < n; ++i) {
    double v = readElement(a, i);
    if (std::isfinite(v))
      m = std::max(m, std::fabs(v));
  }
  return m;
}

/// Integers: equal, except where `flags` marks an element that derives from
/// an ambiguous comparison of floats.
static void compareIntegers(Comparison &c, const HostArray &ref,
                            const HostArray &got, const HostArray *flags) {
  int64_t n = ref.numElements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = readInteger(ref, i), g = readInteger(got, i);
    c.maxRef = std::max(c.maxRef, std::fabs(static_cast<double>(r)));
    if (r == g)
      continue;
    if (flags && readInteger(*flags, i)) {
      ++c.undetermined;
      continue;
    }
    ++c.mismatches;
    double d = std::fabs(static_cast<double>(r) - static_cast<double>(g));
    if (d > c.maxAbs || c.worst < 0) {
      c.maxAbs = d;
      c.worst = i;
    }
  }
  c.maxRel = c.maxRef > 0 ? c.maxAbs / c.maxRef : (c.maxAbs > 0 ? 1 : 0);
  c.tolerance = 0;
  c.ratio = c.mismatches ? std::numeric_limits<double>::infinity() : 0;
  c.status = c.mismatches == 0 ? "PASS" : "FAIL";
  if (c.mismatches)
    c.note = llvm::formatv("{0} of {1} elements differ (integers must be "
                           "exact)",
                           c.mismatches, n)
                 .str();
  else if (c.undetermined)
    c.note = llvm::formatv("{0} elements differ where they derive from "
                           "comparisons of floats closer than their bounds",
                           c.undetermined)
                 .str();
}

double DerivedTolerance::at(int64_t i) const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double e = bound ? readElement(*bound, i) : inf;
  // A NaN bound (0 * inf in a rule) or spread is no information at all.
  double byBound = std::isnan(e) ? inf : kBoundsPerComparison * e;
  double s = i < static_cast<int64_t>(spread.size()) ? spread[i] : inf;
  double bySpread = std::isnan(s) ? inf : kSpreadsPerComparison * s;
  return std::min(byBound, bySpread);
}

Comparison mlir::ga::verify::compareResult(unsigned index, const Slot &slot,
                                           const HostArray &ref,
                                           const HostArray &got,
                                           const DerivedTolerance *derived,
                                           std::optional<double> rtol,
                                           double atol) {
  const HostArray *bound = derived ? derived->bound : nullptr;
  Comparison c;
  c.index = index;
  c.type = typeToString(slot.type);
  c.isFloat = isFloatKind(slot.kind);
  c.shape = ref.shape;
  c.derived = derived != nullptr;
  if (ref.shape != got.shape || (bound && bound->shape != ref.shape)) {
    c.status = "FAIL";
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "shape mismatch: reference [";
    llvm::interleave(ref.shape, os, ",");
    os << "], rewritten [";
    llvm::interleave(got.shape, os, ",");
    os << "]";
    c.note = s;
    c.maxAbs = c.maxRel = c.ratio = std::numeric_limits<double>::infinity();
    return c;
  }
  int64_t n = ref.numElements();
  if (!c.isFloat) {
    compareIntegers(c, ref, got, bound);
    return c;
  }
  double normwise =
      atol + (rtol ? *rtol : defaultRtol(slot.kind)) * maxFiniteMagnitude(ref);
  int64_t refNonFinite = 0, patternMismatch = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = readElement(ref, i), g = readElement(got, i);
    bool rf = std::isfinite(r), gf = std::isfinite(g);
    if (!rf)
      ++refNonFinite;
    if (!rf || !gf) {
      bool same = (std::isnan(r) && std::isnan(g)) || r == g;
      if (!same) {
        ++patternMismatch;
        if (c.worst < 0)
          c.worst = i;
      }
      continue;
    }
    c.maxRef = std::max(c.maxRef, std::fabs(r));
    double d = std::fabs(r - g);
    c.maxAbs = std::max(c.maxAbs, d);
    double tol = normwise;
    if (derived) {
      tol = derived->at(i);
      if (std::isinf(tol))
        ++c.undetermined;
    }
    double ratio = d == 0    ? 0
                   : tol > 0 ? d / tol
                             : std::numeric_limits<double>::infinity();
    if (ratio > c.ratio || c.worst < 0) {
      c.ratio = ratio;
      c.worst = i;
      c.tolerance = tol;
    }
  }
  if (!derived)
    c.tolerance = normwise;
  c.maxRel = c.maxRef > 0
                 ? c.maxAbs / c.maxRef
                 : (c.maxAbs > 0 ? std::numeric_limits<double>::infinity() : 0);
  bool ok = c.ratio <= 1 && patternMismatch == 0;
  if (c.undetermined)
    c.note = llvm::formatv("{0} of {1} elements have no finite tolerance: they "
                           "are undetermined at this precision",
                           c.undetermined, n)
                 .str();
  if (patternMismatch) {
    c.maxAbs = c.maxRel = c.ratio = std::numeric_limits<double>::infinity();
    c.note = llvm::formatv("{0} elements are NaN/Inf in only one of the two "
                           "results",
                           patternMismatch)
                 .str();
  }
  if (refNonFinite && !patternMismatch) {
    ok = false;
    c.note = llvm::formatv("the reference has {0} NaN/Inf elements: the "
                           "inputs are outside the step's domain (annotate "
                           "arguments with ga.init / ga.range)",
                           refNonFinite)
                 .str();
  }
  c.status = ok ? "PASS" : "FAIL";
  return c;
}

std::string mlir::ga::verify::formatIndex(int64_t linear,
                                          ArrayRef<int64_t> shape) {
  if (linear < 0)
    return "-";
  if (shape.empty())
    return "[]";
  SmallVector<int64_t> idx(shape.size());
  for (int64_t k = shape.size() - 1; k >= 0; --k) {
    idx[k] = shape[k] ? linear % shape[k] : 0;
    linear = shape[k] ? linear / shape[k] : 0;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += (k ? "," : "") + std::to_string(idx[k]);
  return s + "]";
}

bool mlir::ga::verify::isWorse(const Comparison &a, const Comparison &b) {
  if (a.passed() != b.passed())
    return !a.passed();
  return a.ratio > b.ratio;
}
