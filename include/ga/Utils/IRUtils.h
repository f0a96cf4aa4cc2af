//===- IRUtils.h - small IR helpers shared by the passes --------*- C++ -*-===//
//
// One definition of each small IR query or clean-up that several passes
// need.
//
//===----------------------------------------------------------------------===//

#ifndef GA_UTILS_IRUTILS_H
#define GA_UTILS_IRUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Block.h"

namespace mlir::ga {

/// Whether `fill` writes +0.0 (the value a BLAS call with beta = 0 leaves in
/// place of the product's initial output, and the start of an accumulator).
bool isZeroFill(linalg::FillOp fill);

/// Erases trivially dead ops in `block` and, recursively, in the regions of
/// its ops; returns how many. Walking each block backwards erases whole dead
/// chains in one sweep: users are visited before their producers.
int64_t eraseDeadOps(Block &block);

} // namespace mlir::ga

#endif // GA_UTILS_IRUTILS_H
