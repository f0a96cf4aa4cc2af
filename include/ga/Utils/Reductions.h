//===- Reductions.h - matching reductions in linalg ops ---------*- C++ -*-===//

#ifndef GA_UTILS_REDUCTIONS_H
#define GA_UTILS_REDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <optional>

namespace mlir::ga {

/// The op of `op`'s region that folds the value computed for result
/// `resultIndex` into that output's block argument, when it is a single
/// associative and commutative op (`arith.addf`, `arith.maxnumf`, ...), the
/// block argument has no other use and the combined value is only yielded.
/// Only then may the output start from any accumulator of that kind.
Operation *matchCombiner(linalg::LinalgOp op, unsigned resultIndex);

/// The combining kind of `matchCombiner`, if any.
std::optional<vector::CombiningKind> getCombinerKind(linalg::LinalgOp op,
                                                     unsigned resultIndex);

/// Whether `op` is a `linalg.fill`, or a `linalg.generic` that does the same
/// (what generalization makes of one): no shaped inputs, no reductions, one
/// output whose value the payload does not read.
bool isFillLike(linalg::LinalgOp op);

/// Whether `value` is a tensor filled with the neutral element of `kind`
/// (`linalg.fill` of a constant, or a splat constant).
bool isNeutralTensor(Value value, vector::CombiningKind kind);

} // namespace mlir::ga

#endif // GA_UTILS_REDUCTIONS_H
