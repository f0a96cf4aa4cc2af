//===- GADialect.h - the ga dialect -----------------------------*- C++ -*-===//

#ifndef GA_IR_GADIALECT_H
#define GA_IR_GADIALECT_H

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dialect.h"

#include "ga/IR/GADialect.h.inc"

#endif // GA_IR_GADIALECT_H
