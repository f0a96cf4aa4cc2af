//===- GAToNCCL.cpp - data-parallel collectives to the NCCL runtime -------===//
//
// --convert-ga-to-nccl: `ga.all_reduce` / `shard.all_reduce` to in-place
// `ga.nccl_all_reduce` ops on their buffers, `ga.reduce_scatter` /
// `ga.all_gather` (sharded steps) to in-place `ga.nccl_reduce_scatter` /
// `ga.nccl_all_gather` on a buffer of the whole tensor (padded to NCCL's
// equal parts when the rows are uneven), with NCCL's own datatype and
// reduction codes, `mean` as ncclAvg. The ops are synchronous
// here; --ga-gpu-single-stream orders them on the step's stream and
// --ga-lower-library-ops makes them calls of the NCCL runtime
// (lib/Runtime/NCCL).
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"
#include "ga/IR/Diagnostics.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/IR/GAShardOps.h"
#include "ga/Utils/IRUtils.h"

#include "../CollectiveLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "ga-runtime/GARuntimeABI.h"

#include <array>

namespace mlir::ga {
#define GEN_PASS_DEF_CONVERTGATONCCL
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

/// `flat`'s elements [rank * count, (rank + 1) * count): this rank's part.
static Value getPart(OpBuilder &b, Location loc, Value flat, int64_t rank,
                     int64_t count) {
  return memref::SubViewOp::create(
      b, loc, flat, ArrayRef<int64_t>{rank * count}, ArrayRef<int64_t>{count},
      ArrayRef<int64_t>{1});
}

/// `type` with `rows` rows.
static RankedTensorType withRows(RankedTensorType type, int64_t rows) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = rows;
  return type.clone(shape);
}

/// The offsets, sizes and strides of rows [offset, offset + size) of a
/// tensor of `type` (every other dimension whole).
static std::array<SmallVector<OpFoldResult>, 3>
rowSlice(OpBuilder &b, RankedTensorType type, int64_t offset, int64_t size) {
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t dim : type.getShape())
    sizes.push_back(b.getIndexAttr(dim));
  offsets[0] = b.getIndexAttr(offset);
  sizes[0] = b.getIndexAttr(size);
  return {offsets, sizes, strides};
}

/// The rows [offset, offset + size) of `tensor`.
static Value extractRows(OpBuilder &b, Location loc, Value tensor,
                         int64_t offset, int64_t size) {
  auto [offsets, sizes, strides] =
      rowSlice(b, cast<RankedTensorType>(tensor.getType()), offset, size);
  return tensor::ExtractSliceOp::create(b, loc, tensor, offsets, sizes,
                                        strides);
}

/// `dest` with `source`'s rows written at row `offset`.
static Value insertRows(OpBuilder &b, Location loc, Value source, Value dest,
                        int64_t offset) {
  auto type = cast<RankedTensorType>(source.getType());
  auto [offsets, sizes, strides] =
      rowSlice(b, type, offset, type.getDimSize(0));
  return tensor::InsertSliceOp::create(b, loc, source, dest, offsets, sizes,
                                       strides);
}

/// `padded` with its rows [offset, offset + size) zero (a fill of that slice,
/// in place on `padded`'s buffer once bufferized).
static Value zeroRows(OpBuilder &b, Location loc, Value padded, int64_t offset,
                      int64_t size) {
  if (size == 0)
    return padded;
  Type elementType = cast<RankedTensorType>(padded.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType));
  Value rows = extractRows(b, loc, padded, offset, size);
  Value filled = linalg::FillOp::create(b, loc, zero, rows).getResult(0);
  return insertRows(b, loc, filled, padded, offset);
}

/// Where the rows of a sharded tensor lie in the buffer NCCL works on. NCCL's
/// parts are equal: rank q's part is the rows [q * part, (q + 1) * part) of a
/// buffer of world * part rows, part = ceil(D / world). Rank q holds the rows
/// [begin_q, end_q) of the D rows (ReduceScatterOp::shardRows, the CPU's
/// layout), the first end_q - begin_q rows of its part; the rest of the part
/// is padding, zero, which no result reads. When world divides D, the
/// buffer is the tensor's own (no padding, no copy).
struct PaddedLayout {
  int64_t rows, world, part;
  bool isPadded() const { return part * world != rows; }
  std::pair<int64_t, int64_t> shard(int64_t rank) const {
    return ReduceScatterOp::shardRows(rows, world, rank);
  }
};

/// `ga.reduce_scatter` on uneven rows: the input copied into the padded
/// buffer rank by rank (each rank's rows at the start of its part, the rest
/// zero), reduced there in place; this rank's rows are the start of its part.
static void lowerPaddedScatter(OpBuilder &b, Location loc,
                               ReduceScatterOp scatter,
                               const PaddedLayout &layout, int32_t datatype,
                               int32_t reduction) {
  auto full = cast<RankedTensorType>(scatter.getInput().getType());
  RankedTensorType paddedType = withRows(full, layout.world * layout.part);
  CollectiveBuffer buf;
  buf.tensor =
      bufferization::AllocTensorOp::create(b, loc, paddedType, ValueRange());
  for (int64_t q = 0; q < layout.world; ++q) {
    auto [begin, end] = layout.shard(q);
    int64_t at = q * layout.part;
    buf.tensor = zeroRows(b, loc, buf.tensor, at + end - begin,
                          layout.part - (end - begin));
    if (end > begin)
      buf.tensor = insertRows(
          b, loc, extractRows(b, loc, scatter.getInput(), begin, end - begin),
          buf.tensor, at);
  }
  setBuffers(b, loc, buf);
  int64_t count = paddedType.getNumElements() / layout.world;
  int64_t rank = scatter.getRank();
  NcclReduceScatterOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                              buf.flat, getPart(b, loc, buf.flat, rank, count),
                              datatype, reduction, layout.world);
  auto [begin, end] = layout.shard(rank);
  replaceShardedCollective(b, loc, scatter, paddedType, buf.buffer,
                           rank * layout.part,
                           rank * layout.part + end - begin);
}

/// `ga.all_gather` on uneven rows: this rank's rows written at the start of
/// its part of the padded buffer (the rest zero), gathered there in place,
/// then every rank's rows copied out of their parts into the whole tensor,
/// so that no padding row is ever read.
static void lowerPaddedGather(OpBuilder &b, Location loc, AllGatherOp gather,
                              const PaddedLayout &layout, int32_t datatype) {
  auto full = cast<RankedTensorType>(gather.getResult().getType());
  RankedTensorType paddedType = withRows(full, layout.world * layout.part);
  int64_t rank = gather.getRank();
  auto [begin, end] = layout.shard(rank);
  CollectiveBuffer buf;
  buf.tensor =
      bufferization::AllocTensorOp::create(b, loc, paddedType, ValueRange());
  buf.tensor = zeroRows(b, loc, buf.tensor, rank * layout.part + end - begin,
                        layout.part - (end - begin));
  if (end > begin)
    buf.tensor =
        insertRows(b, loc, gather.getInput(), buf.tensor, rank * layout.part);
  setBuffers(b, loc, buf);
  int64_t count = paddedType.getNumElements() / layout.world;
  NcclAllGatherOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                          getPart(b, loc, buf.flat, rank, count), buf.flat,
                          datatype, layout.world);
  Value padded = bufferization::ToTensorOp::create(
      b, loc, paddedType, buf.buffer, /*restrict=*/true, /*writable=*/true);
  Value result =
      bufferization::AllocTensorOp::create(b, loc, full, ValueRange());
  for (int64_t q = 0; q < layout.world; ++q) {
    auto [first, last] = layout.shard(q);
    if (last > first)
      result = insertRows(
          b, loc, extractRows(b, loc, padded, q * layout.part, last - first),
          result, first);
  }
  gather.getResult().replaceAllUsesWith(result);
  gather.erase();
}

namespace {
struct ConvertGAToNCCLPass
    : public ga::impl::ConvertGAToNCCLBase<ConvertGAToNCCLPass> {
  using ConvertGAToNCCLBase::ConvertGAToNCCLBase;

  void runOnOperation() override;

private:
  LogicalResult lowerSharded(Operation *op);
};
} // namespace

/// `ga.reduce_scatter` reduces the whole input's buffer in place (the
/// accumulator itself when private, else a copy) and reads back this rank's
/// rows; `ga.all_gather` writes this rank's rows into a new buffer of the
/// whole tensor, where NCCL fills in the other ranks' rows. Both are in
/// place as NCCL defines it: this rank's part is a view of the whole buffer
/// at rank * count. Rows that do not split in equal parts go through a
/// padded buffer (PaddedLayout).
LogicalResult ConvertGAToNCCLPass::lowerSharded(Operation *op) {
  Location loc = op->getLoc();
  auto scatter = dyn_cast<ReduceScatterOp>(op);
  auto gather = dyn_cast<AllGatherOp>(op);
  auto full = cast<RankedTensorType>(scatter ? scatter.getInput().getType()
                                             : gather.getResult().getType());
  int64_t rank = scatter ? scatter.getRank() : gather.getRank();
  int64_t world = scatter ? scatter.getWorld() : gather.getWorld();
  FailureOr<RuntimeCodes> codes = getShardedCodes(
      op, full, scatter ? std::optional(scatter.getKind()) : std::nullopt,
      CollectiveRuntime::Nccl);
  if (failed(codes))
    return failure();
  auto [datatype, reduction] = *codes;
  int64_t rows = full.getDimSize(0);
  PaddedLayout layout{rows, world, (rows + world - 1) / world};
  OpBuilder b(op);
  ++numCollectives;
  if (layout.isPadded()) {
    ++numPadded;
    if (scatter)
      lowerPaddedScatter(b, loc, scatter, layout, datatype, reduction);
    else
      lowerPaddedGather(b, loc, gather, layout, datatype);
    return success();
  }
  int64_t count = full.getNumElements() / world;
  auto [begin, end] = layout.shard(rank);
  CollectiveBuffer buf;
  if (scatter) {
    CollectiveGroup group;
    group.ops.push_back(op);
    buf = prepareBuffer(b, loc, group);
    Value part = getPart(b, loc, buf.flat, rank, count);
    NcclReduceScatterOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                                buf.flat, part, datatype, reduction, world);
  } else {
    // A tensor of its own (bufferization owns and frees it), this rank's
    // rows written in through its buffer.
    auto memrefType = MemRefType::get(full.getShape(), full.getElementType());
    buf.tensor =
        bufferization::AllocTensorOp::create(b, loc, full, ValueRange());
    buf.buffer =
        bufferization::ToBufferOp::create(b, loc, memrefType, buf.tensor);
    SmallVector<int64_t> offsets(full.getRank(), 0), sizes(full.getShape());
    SmallVector<int64_t> strides(full.getRank(), 1);
    offsets[0] = begin;
    sizes[0] = end - begin;
    Value rows =
        memref::SubViewOp::create(b, loc, buf.buffer, offsets, sizes, strides);
    bufferization::MaterializeInDestinationOp::create(b, loc, TypeRange(),
                                                      gather.getInput(), rows)
        .setWritable(true);
    buf.flat = flattenBuffer(b, loc, buf.buffer);
    Value part = getPart(b, loc, buf.flat, rank, count);
    NcclAllGatherOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, part,
                            buf.flat, datatype, world);
  }
  replaceShardedCollective(b, loc, op, full, buf.buffer, begin, end);
  return success();
}

void ConvertGAToNCCLPass::runOnOperation() {
  auto lowerGroup = [&](CollectiveGroup &group) -> LogicalResult {
    // prepareRuntimeCall's codes and buffer; the address and count are the
    // op's lowering's (--ga-lower-library-ops), from the memref.
    FailureOr<RuntimeCodes> codes =
        getRuntimeCodes(group, CollectiveRuntime::Nccl);
    if (failed(codes))
      return failure();
    Location loc = group.ops.back()->getLoc();
    OpBuilder b(group.ops.back());
    CollectiveBuffer buf = prepareBuffer(b, loc, group);
    // No stream yet: --ga-gpu-single-stream orders the op on the step's.
    NcclAllReduceOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                            buf.flat, codes->datatype, codes->reduction);
    ++numCollectives;
    replaceWithReduced(b, loc, group, buf, nullptr);
    return success();
  };
  if (failed(lowerCollectives(getOperation(), lowerGroup,
                              [&](Operation *op) { return lowerSharded(op); })))
    signalPassFailure();
}
