//===- GALibraryOps.h - library calls of the GPU lowering -------*- C++ -*-===//
//
// `ga.blas_matmul`, the NCCL collectives (`ga.nccl_all_reduce`,
// `ga.nccl_reduce_scatter`, `ga.nccl_all_gather`), the CUDA graph ops and
// the stream ops (include/ga/IR/GALibraryOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GALIBRARYOPS_H
#define GA_IR_GALIBRARYOPS_H

#include "ga/IR/GADialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ga/IR/GALibraryOps.h.inc"

#endif // GA_IR_GALIBRARYOPS_H
