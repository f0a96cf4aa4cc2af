//===- ConstantIndices.h - range-checked constants read from IR -*- C++ -*-===//
//
// The one place where the passes read the constant dimension index of a
// `tensor.dim` / `memref.dim` and check it against the rank of the source.
// The verifiers leave it unchecked on purpose (`tensor.dim %t, %c-1` is valid
// IR whose result is undefined at run time; folding can create it), so a
// pass that indexes a shape with it must check first: out of range is a
// located error, never an out-of-bounds access.
//
//===----------------------------------------------------------------------===//

#ifndef GA_UTILS_CONSTANTINDICES_H
#define GA_UTILS_CONSTANTINDICES_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpDefinition.h"

#include <optional>

namespace mlir {
namespace tensor {
class DimOp;
} // namespace tensor
namespace memref {
class DimOp;
} // namespace memref
} // namespace mlir

namespace mlir::ga {

/// What is known about the dimension a `tensor.dim` or `memref.dim` queries.
struct DimIndex {
  enum class Kind {
    /// The index is not a constant, or the source is unranked.
    Unknown,
    /// A constant in [0, rank) of the ranked source: `value`.
    InRange,
    /// A constant outside [0, rank): the op is undefined at run time.
    OutOfRange,
  };
  Kind kind = Kind::Unknown;
  /// The constant (also when out of range, for the message).
  int64_t value = 0;
  /// The rank of the source (0 when unranked).
  int64_t rank = 0;

  bool isInRange() const { return kind == Kind::InRange; }
  bool isOutOfRange() const { return kind == Kind::OutOfRange; }
};

/// Reads the index of `op` and checks it against the rank of its source.
DimIndex getDimIndex(tensor::DimOp op);
DimIndex getDimIndex(memref::DimOp op);

/// The constant index of `op` when it lies within the rank of its ranked
/// source; std::nullopt when it is not a constant or out of range (use
/// getDimIndex, or emitDimIndexError, to tell these apart).
std::optional<int64_t> getConstantDimIndex(tensor::DimOp op);
std::optional<int64_t> getConstantDimIndex(memref::DimOp op);

/// Appends the reason an out-of-range `index` is refused to `diag`, e.g.
/// "dimension index -1 is out of range for a source of rank 2 (undefined at
/// run time)".
void appendDimIndexReason(Diagnostic &diag, const DimIndex &index);

/// Emits the located error for a `tensor.dim` / `memref.dim` whose index is a
/// constant out of range and fails; succeeds (emitting nothing) otherwise.
LogicalResult checkDimIndex(Operation *dimOp);

} // namespace mlir::ga

#endif // GA_UTILS_CONSTANTINDICES_H
