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

LogicalResult HostCollectiveStartOp::verify() {
  MemRefType buffer = getBuffer().getType();
  if (!buffer.isLastDimUnitStride())
    return emitOpError("needs a contiguous buffer (the engine works on count "
                       "consecutive elements), not ")
           << buffer;
  if (static_cast<int32_t>(getDatatype()) < 0 ||
      static_cast<int32_t>(getReduction()) < 0)
    return emitOpError("needs the runtime's codes of a datatype and a "
                       "reduction (non-negative)");
  std::optional<uint64_t> rows = getRows();
  if (rows && (!buffer.hasStaticShape() ||
               buffer.getNumElements() % static_cast<int64_t>(*rows) != 0))
    return emitOpError("needs a static buffer of whole rows: ")
           << buffer << " is not " << *rows << " rows";
  Value input = getInput();
  if (!input != !getInputOffset())
    return emitOpError("needs an input and its input_offset together");
  if (!input)
    return success();
  auto type = cast<MemRefType>(input.getType());
  if (!rows)
    return emitOpError("gathers rows: an input needs `rows`");
  if (type.getElementType() != buffer.getElementType())
    return emitOpError("needs an input of the buffer's element type, not ")
           << type.getElementType();
  int64_t rowSize = buffer.getNumElements() / static_cast<int64_t>(*rows);
  int64_t offset = static_cast<int64_t>(*getInputOffset());
  if (offset % rowSize != 0 ||
      offset + type.getNumElements() > buffer.getNumElements() ||
      type.getNumElements() % rowSize != 0)
    return emitOpError("needs an input of whole rows inside the buffer: ")
           << type.getNumElements() << " elements at " << offset << " of "
           << buffer.getNumElements();
  return success();
}

void HostCollectiveStartOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  auto *resource = SideEffects::DefaultResource::get();
  // An all-gather writes every element of the buffer without reading it
  // (this rank's rows from the input, the others' from the engine).
  if (OpOperand *input =
          getInputMutable().empty() ? nullptr : &getInputMutable()[0])
    effects.emplace_back(MemoryEffects::Read::get(), input, resource);
  else
    effects.emplace_back(MemoryEffects::Read::get(), &getBufferMutable(),
                         resource);
  effects.emplace_back(MemoryEffects::Write::get(), &getBufferMutable(),
                       resource);
}

#define GET_OP_CLASSES
#include "ga/IR/GAShardOps.cpp.inc"
