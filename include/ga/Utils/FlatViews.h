//===- FlatViews.h - tensors as slices of one flat tensor -------*- C++ -*-===//
//
// A gradient bucket and a packed collective hold several tensors as
// consecutive elements of one 1-d tensor. These build the views between the
// two, for --ga-bucket-gradients and the collective lowerings alike.
//
//===----------------------------------------------------------------------===//

#ifndef GA_UTILS_FLATVIEWS_H
#define GA_UTILS_FLATVIEWS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ga {

/// Elements [offset, offset + n) of the 1-d tensor `flat` as a tensor of
/// `type` (n = its number of elements): an extract_slice, then a reshape.
Value extractFlatView(OpBuilder &b, Location loc, Value flat, int64_t offset,
                      RankedTensorType type);

/// `flat` with elements [offset, offset + n) replaced by the elements of
/// the ranked tensor `value` (n of them): a reshape, then an insert_slice.
Value insertFlatView(OpBuilder &b, Location loc, Value value, Value flat,
                     int64_t offset);

} // namespace mlir::ga

#endif // GA_UTILS_FLATVIEWS_H
