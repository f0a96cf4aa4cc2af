//===- GAShardOps.h - sharded collectives of the ga dialect -----*- C++ -*-===//
//
// `ga.reduce_scatter` and `ga.all_gather`, and the host collectives on
// buffers that --convert-ga-to-host-collectives makes of them
// (include/ga/IR/GAShardOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GASHARDOPS_H
#define GA_IR_GASHARDOPS_H

#include "ga/IR/GAOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ga/IR/GAShardOps.h.inc"

#endif // GA_IR_GASHARDOPS_H
