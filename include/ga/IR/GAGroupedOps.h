//===- GAGroupedOps.h - grouped products of the ga dialect ------*- C++ -*-===//
//
// `ga.grouped_matmul` (include/ga/IR/GAGroupedOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GAGROUPEDOPS_H
#define GA_IR_GAGROUPEDOPS_H

#include "ga/IR/GAOps.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#define GET_OP_CLASSES
#include "ga/IR/GAGroupedOps.h.inc"

#endif // GA_IR_GAGROUPEDOPS_H
