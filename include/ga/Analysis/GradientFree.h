//===- GradientFree.h - statistics no gradient flows through ----*- C++ -*-===//
//
// Which batch-coupled statistics the micro-batch rewrite computes in an
// earlier loop without `recompute-statistics`.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_GRADIENTFREE_H
#define GA_ANALYSIS_GRADIENTFREE_H

#include "ga/Analysis/BatchDependence.h"

namespace mlir::ga {

/// Whether no gradient can flow through `value`: it depends on the step's
/// non-per-sample arguments (parameters) only through integer values (top-k
/// indices, comparisons, counts), so it is piecewise constant in them. A
/// statistic of the batch that is gradient-free is computed exactly in a
/// forward-only loop before its per-sample users without
/// `recomputeStatistics` (GradientFree.cpp).
bool isGradientFree(Value value);

/// Whether the post-reduction `value` (of class `cls`), read by per-sample
/// computation, is computed in an earlier loop: a data-only statistic, a
/// gradient-free one, or any with `recomputeStatistics`.
bool isHoistedStatistic(Value value, const BatchClass &cls,
                        const BatchDependence::Options &options);

} // namespace mlir::ga

#endif // GA_ANALYSIS_GRADIENTFREE_H
