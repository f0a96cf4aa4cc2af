//===- IRUtils.h - small IR helpers shared by the passes --------*- C++ -*-===//
//
// One definition of each small IR query or clean-up that several passes
// need.
//
//===----------------------------------------------------------------------===//

#ifndef GA_UTILS_IRUTILS_H
#define GA_UTILS_IRUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"

namespace mlir::ga {

/// Whether `fill` writes +0.0 (the value a BLAS call with beta = 0 leaves in
/// place of the product's initial output, and the start of an accumulator).
bool isZeroFill(linalg::FillOp fill);

/// The buffer a memref value is a view of: `value` with every
/// ViewLikeOpInterface op (subview, reshape, cast, ...) looked through; an
/// allocation, a global, a block argument or the result of another op.
Value getViewRoot(Value value);

/// Whether the memref `value` is a view of host memory in a GPU lowering: a
/// stack buffer (`memref.alloca`) or a global (`memref.get_global`).
bool isHostMemory(Value value);

/// Fails, with an error at the symbol, if `module` has a symbol `name` that
/// is not a function of type `type`: the calls a pass emits of the external
/// function `name` (`what`, for the message, e.g. "the cuBLASLt runtime
/// function") would not match it.
LogicalResult checkExternalFunction(ModuleOp module, StringRef name,
                                    FunctionType type, StringRef what);

/// The function `name` of `module`, or a new private declaration of it with
/// type `type` at the start of the module.
func::FuncOp getOrDeclareFunction(ModuleOp module, StringRef name,
                                  FunctionType type);

/// Erases trivially dead ops in `block` and, recursively, in the regions of
/// its ops; returns how many. Walking each block backwards erases whole dead
/// chains in one sweep: users are visited before their producers.
int64_t eraseDeadOps(Block &block);

/// The reassociation that folds all `rank` dimensions into one (none for a
/// 0-d shape), for collapse_shape / expand_shape to and from 1-d.
SmallVector<ReassociationIndices> getCollapseAllReassociation(int64_t rank);

/// The ranked tensor `value` as a 1-d tensor of its elements (a free
/// reshape: `tensor.collapse_shape`, or `tensor.expand_shape` of a 0-d one).
Value flattenTensor(OpBuilder &b, Location loc, Value value);

/// The inverse of flattenTensor: the 1-d `flat` seen as a tensor of `type`
/// (with as many elements).
Value unflattenTensor(OpBuilder &b, Location loc, Value flat,
                      RankedTensorType type);

} // namespace mlir::ga

#endif // GA_UTILS_IRUTILS_H
