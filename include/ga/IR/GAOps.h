//===- GAOps.h - operations of the ga dialect -------------------*- C++ -*-===//

#ifndef GA_IR_GAOPS_H
#define GA_IR_GAOPS_H

#include "ga/IR/GADialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ga/IR/GAEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ga/IR/GAAttrs.h.inc"

#define GET_OP_CLASSES
#include "ga/IR/GAOps.h.inc"

namespace mlir::ga {
/// Whether `kind` is defined on elements of type `elementType`.
bool isCombiningKindValidFor(vector::CombiningKind kind, Type elementType);

/// Whether combining `element` into any value with `kind` leaves that value
/// unchanged (0 for add, -inf for max, all ones for and, ...).
bool isNeutralElement(vector::CombiningKind kind, Attribute element);

/// The neutral element of `kind` on `elementType` (0 for add, -inf for
/// maxnumf, ...), or null if `kind` is not defined on that type.
TypedAttr getNeutralElement(vector::CombiningKind kind, Type elementType);
} // namespace mlir::ga

#endif // GA_IR_GAOPS_H
