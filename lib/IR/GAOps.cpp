//===- GAOps.cpp - operations of the ga dialect ---------------------------===//

#include "ga/IR/GAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ga;

bool mlir::ga::isCombiningKindValidFor(vector::CombiningKind kind,
                                       Type elementType) {
  using vector::CombiningKind;
  switch (kind) {
  case CombiningKind::ADD:
  case CombiningKind::MUL:
    return elementType.isIntOrIndexOrFloat();
  case CombiningKind::MINUI:
  case CombiningKind::MINSI:
  case CombiningKind::MAXUI:
  case CombiningKind::MAXSI:
  case CombiningKind::AND:
  case CombiningKind::OR:
  case CombiningKind::XOR:
    return elementType.isIntOrIndex();
  case CombiningKind::MINNUMF:
  case CombiningKind::MAXNUMF:
  case CombiningKind::MINIMUMF:
  case CombiningKind::MAXIMUMF:
    return isa<FloatType>(elementType);
  }
  return false;
}

bool mlir::ga::isNeutralElement(vector::CombiningKind kind, Attribute element) {
  using vector::CombiningKind;
  if (auto f = dyn_cast_if_present<FloatAttr>(element)) {
    const APFloat &v = f.getValue();
    switch (kind) {
    case CombiningKind::ADD:
      // -0.0 is the exact neutral element; +0.0 only differs on -0.0 inputs,
      // whose sign no gradient relies on, and is what frameworks write.
      return v.isZero();
    case CombiningKind::MUL:
      return v.isExactlyValue(1.0);
    case CombiningKind::MAXNUMF:
    case CombiningKind::MAXIMUMF:
      return v.isInfinity() && v.isNegative();
    case CombiningKind::MINNUMF:
    case CombiningKind::MINIMUMF:
      return v.isInfinity() && !v.isNegative();
    default:
      return false;
    }
  }
  if (auto i = dyn_cast_if_present<IntegerAttr>(element)) {
    const APInt &v = i.getValue();
    unsigned width = v.getBitWidth();
    switch (kind) {
    case CombiningKind::ADD:
    case CombiningKind::OR:
    case CombiningKind::XOR:
    case CombiningKind::MAXUI:
      return v.isZero();
    case CombiningKind::MUL:
      return v.isOne();
    case CombiningKind::AND:
    case CombiningKind::MINUI:
      return v.isAllOnes();
    case CombiningKind::MAXSI:
      return v == APInt::getSignedMinValue(width);
    case CombiningKind::MINSI:
      return v == APInt::getSignedMaxValue(width);
    default:
      return false;
    }
  }
  return false;
}

TypedAttr mlir::ga::getNeutralElement(vector::CombiningKind kind,
                                      Type elementType) {
  if (!isCombiningKindValidFor(kind, elementType))
    return {};
  using vector::CombiningKind;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    const llvm::fltSemantics &sem = floatType.getFloatSemantics();
    switch (kind) {
    case CombiningKind::ADD:
      return FloatAttr::get(floatType, APFloat::getZero(sem));
    case CombiningKind::MUL:
      return FloatAttr::get(floatType, APFloat::getOne(sem));
    case CombiningKind::MAXNUMF:
    case CombiningKind::MAXIMUMF:
      return FloatAttr::get(floatType, APFloat::getInf(sem, /*Negative=*/true));
    case CombiningKind::MINNUMF:
    case CombiningKind::MINIMUMF:
      return FloatAttr::get(floatType, APFloat::getInf(sem));
    default:
      return {};
    }
  }
  unsigned width =
      elementType.isIndex() ? 64 : elementType.getIntOrFloatBitWidth();
  APInt value;
  switch (kind) {
  case CombiningKind::ADD:
  case CombiningKind::OR:
  case CombiningKind::XOR:
  case CombiningKind::MAXUI:
    value = APInt::getZero(width);
    break;
  case CombiningKind::MUL:
    value = APInt(width, 1);
    break;
  case CombiningKind::AND:
  case CombiningKind::MINUI:
    value = APInt::getAllOnes(width);
    break;
  case CombiningKind::MAXSI:
    value = APInt::getSignedMinValue(width);
    break;
  case CombiningKind::MINSI:
    value = APInt::getSignedMaxValue(width);
    break;
  default:
    return {};
  }
  return IntegerAttr::get(elementType, value);
}

//===----------------------------------------------------------------------===//
// AccumulateOp
//===----------------------------------------------------------------------===//

LogicalResult AccumulateOp::verify() {
  auto partialType = getPartial().getType();
  auto accType = getAcc().getType();
  if (partialType.getShape() != accType.getShape())
    return emitOpError("partial ") << partialType << " and accumulator "
                                   << accType << " must have the same shape";
  Type partialElt = partialType.getElementType();
  Type accElt = accType.getElementType();
  if (partialElt != accElt) {
    auto pf = dyn_cast<FloatType>(partialElt);
    auto af = dyn_cast<FloatType>(accElt);
    if (!pf || !af || pf.getWidth() >= af.getWidth())
      return emitOpError("partial element type ")
             << partialElt << " must equal the accumulator's " << accElt
             << " or be a narrower float";
  }
  if (!isCombiningKindValidFor(getKind(), accElt))
    return emitOpError("combining kind '")
           << vector::stringifyCombiningKind(getKind())
           << "' is not defined on " << accElt;
  return success();
}

OpFoldResult AccumulateOp::fold(FoldAdaptor adaptor) {
  // Accumulating the combiner's neutral element leaves the accumulator as is.
  auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getPartial());
  // The result has the accumulator's type, so this also holds for a
  // narrower partial.
  if (splat && isNeutralElement(getKind(), splat.getSplatValue<Attribute>()))
    return getAcc();
  return {};
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  Type elt = getInput().getType().getElementType();
  if (!elt.isIntOrFloat())
    return emitOpError("needs integer or float elements, got ") << elt;
  if (getKind() == CollectiveKind::Mean && !isa<FloatType>(elt))
    return emitOpError("'mean' needs float elements, got ") << elt;
  return success();
}

#define GET_OP_CLASSES
#include "ga/IR/GAOps.cpp.inc"
