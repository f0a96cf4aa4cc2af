//===- GAShardOps.h - sharded collectives of the ga dialect -----*- C++ -*-===//
//
// `ga.reduce_scatter` and `ga.all_gather` (include/ga/IR/GAShardOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GASHARDOPS_H
#define GA_IR_GASHARDOPS_H

#include "ga/IR/GAOps.h"

#define GET_OP_CLASSES
#include "ga/IR/GAShardOps.h.inc"

#endif // GA_IR_GASHARDOPS_H
