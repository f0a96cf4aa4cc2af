//===- GAShardOps.cpp - sharded collectives of the ga dialect -------------===//

#include "ga/IR/GAShardOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::ga;

/// Checks that `shard` (rank `rank` of `world`) holds its rows of `full`.
static LogicalResult verifyShard(Operation *op, RankedTensorType full,
                                 RankedTensorType shard, int64_t rank,
                                 int64_t world) {
  if (rank >= world)
    return op->emitOpError("rank ") << rank << " is not below world " << world;
  if (full.getRank() < 1 || !full.hasStaticShape() || !shard.hasStaticShape())
    return op->emitOpError("needs static shapes of rank >= 1");
  if (full.getRank() != shard.getRank() ||
      full.getShape().drop_front() != shard.getShape().drop_front())
    return op->emitOpError("the shard ")
           << shard << " must be rows of " << full;
  auto [begin, end] =
      ReduceScatterOp::shardRows(full.getDimSize(0), world, rank);
  if (shard.getDimSize(0) != end - begin)
    return op->emitOpError("rank ")
           << rank << " of " << world << " holds " << end - begin << " of "
           << full.getDimSize(0) << " rows, not " << shard.getDimSize(0);
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  Type elt = getInput().getType().getElementType();
  if (!elt.isIntOrFloat())
    return emitOpError("needs integer or float elements, got ") << elt;
  if (getKind() == CollectiveKind::Mean && !isa<FloatType>(elt))
    return emitOpError("'mean' needs float elements, got ") << elt;
  return verifyShard(*this, getInput().getType(), getResult().getType(),
                     getRank(), getWorld());
}

LogicalResult AllGatherOp::verify() {
  return verifyShard(*this, getResult().getType(), getInput().getType(),
                     getRank(), getWorld());
}

#define GET_OP_CLASSES
#include "ga/IR/GAShardOps.cpp.inc"
