//===- ConstantIndices.cpp - range-checked constants read from IR ---------===//
//
// See ConstantIndices.h: the one place where constant dimension indices are
// read from IR and checked against the rank they index.
//
//===----------------------------------------------------------------------===//

#include "ga/Utils/ConstantIndices.h"
#include "ga/IR/Diagnostics.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::ga;

/// The index of a dim op whose constant index is `constant` (if any) and
/// whose source has type `sourceType`.
static DimIndex classify(std::optional<int64_t> constant, Type sourceType) {
  DimIndex index;
  auto shaped = dyn_cast<ShapedType>(sourceType);
  if (!constant || !shaped || !shaped.hasRank())
    return index;
  index.value = *constant;
  index.rank = shaped.getRank();
  index.kind = *constant >= 0 && *constant < index.rank
                   ? DimIndex::Kind::InRange
                   : DimIndex::Kind::OutOfRange;
  return index;
}

DimIndex mlir::ga::getDimIndex(tensor::DimOp op) {
  // getConstantIntValue, not DimOp::getConstantIndex: the latter only looks
  // at arith.constant, while a folded constant may come from any dialect.
  return classify(getConstantIntValue(op.getIndex()), op.getSource().getType());
}

DimIndex mlir::ga::getDimIndex(memref::DimOp op) {
  return classify(getConstantIntValue(op.getIndex()), op.getSource().getType());
}

std::optional<int64_t> mlir::ga::getConstantDimIndex(tensor::DimOp op) {
  DimIndex index = getDimIndex(op);
  if (!index.isInRange())
    return std::nullopt;
  return index.value;
}

std::optional<int64_t> mlir::ga::getConstantDimIndex(memref::DimOp op) {
  DimIndex index = getDimIndex(op);
  if (!index.isInRange())
    return std::nullopt;
  return index.value;
}

void mlir::ga::appendDimIndexReason(Diagnostic &diag, const DimIndex &index) {
  diag << DiagnosticCode::ShapeMismatch << "dimension index " << index.value
       << " is out of range for a source of rank " << index.rank
       << " (undefined at run time)";
}

LogicalResult mlir::ga::checkDimIndex(Operation *dimOp) {
  DimIndex index;
  if (auto op = dyn_cast<tensor::DimOp>(dimOp))
    index = getDimIndex(op);
  else if (auto op = dyn_cast<memref::DimOp>(dimOp))
    index = getDimIndex(op);
  if (!index.isOutOfRange())
    return success();
  InFlightDiagnostic diag = dimOp->emitOpError();
  appendDimIndexReason(*diag.getUnderlyingDiagnostic(), index);
  return diag;
}
