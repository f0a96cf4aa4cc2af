//===- BatchSlicing.h - how a micro-batch slices a linalg op ----*- C++ -*-===//
//
// The one rule by which a linalg op is re-created for a micro-batch: a
// micro-batch is a tile of one loop of the op (the batch loop), and every
// operand is sliced along the one dimension that this loop indexes, as
// `TilingInterface` would slice it for a tile of that loop. This is exact
// only when each operand's indexing map uses the loop as a plain dimension
// in at most one result; a map that uses it in a compound expression
// (`d0 floordiv 2`, `7 - d0`) or in two results (`(d0) -> (d0, d0)`) reads
// elements outside the tile's slice.
//
// The batch analysis (BatchLinalg.cpp) refuses per-sample ops whose maps
// fail this rule, and the rewrite (lib/Transforms/MicroBatch) slices and
// recomputes operands only under it: a value whose producer fails it is
// sliced from its full-batch value instead of recomputed.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_BATCHSLICING_H
#define GA_ANALYSIS_BATCHSLICING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <string>

namespace mlir::ga {

/// How a tile of one loop of a linalg op slices its operands.
struct LoopSlicing {
  /// For each operand (inputs, then inits): the dimension that the loop
  /// indexes as a plain dimension, or none when the operand does not depend
  /// on the loop (it is read whole by every tile).
  SmallVector<std::optional<unsigned>> operandDims;
};

/// The slicing of `op`'s operands by a tile of loop `loop`, or failure when
/// an operand's map uses the loop in a compound expression or in more than
/// one dimension; then `culprit` (if given) is set to that operand and
/// `reason` (if given) says what is wrong with its map.
FailureOr<LoopSlicing> getLoopSlicing(linalg::LinalgOp op, unsigned loop,
                                      OpOperand **culprit = nullptr,
                                      std::string *reason = nullptr);

} // namespace mlir::ga

#endif // GA_ANALYSIS_BATCHSLICING_H
