//===- GAToNCCL.cpp - data-parallel collectives to the NCCL runtime -------===//
//
// --convert-ga-to-nccl: `ga.all_reduce` / `shard.all_reduce` to in-place
// `ga.nccl_all_reduce` ops on their buffers, `ga.reduce_scatter` /
// `ga.all_gather` (sharded steps) to in-place `ga.nccl_reduce_scatter` /
// `ga.nccl_all_gather` on a buffer of the whole tensor, with NCCL's own
// datatype and reduction codes, `mean` as ncclAvg. The ops are synchronous
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

namespace mlir::ga {
#define GEN_PASS_DEF_CONVERTGATONCCL
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

/// NCCL's ncclDataType_t (nccl.h; stable across NCCL 2.x): ncclInt8,
/// ncclInt32, ncclInt64 for signless integers, the ncclUint* for unsigned
/// ones, no 16-bit integers.
static constexpr ElementTypeCodes kNcclDatatypes = {
    /*f16=*/6,
    /*bf16=*/9,
    /*f32=*/7,
    /*f64=*/8,
    /*signless=*/{0, -1, 2, 4},
    /*signedInt=*/{-1, -1, -1, -1},
    /*unsignedInt=*/{1, -1, 3, 5}};

/// NCCL's ncclRedOp_t in the order of `Reduction`: ncclSum, ncclAvg,
/// ncclMax, ncclMin, ncclProd; no bitwise reductions.
static constexpr ReductionCodes kNcclOps = {0, 4, 2, 3, 1, -1, -1, -1};

namespace {
struct ConvertGAToNCCLPass
    : public ga::impl::ConvertGAToNCCLBase<ConvertGAToNCCLPass> {
  using ConvertGAToNCCLBase::ConvertGAToNCCLBase;

  void runOnOperation() override;

private:
  LogicalResult lowerSharded(Operation *op);
};
} // namespace

/// The NCCL codes of the element type and reduction of a `ga.reduce_scatter`
/// or `ga.all_gather` (sum for the gather, which reduces nothing), and the
/// number of elements of one rank's part; fails with a located error where
/// NCCL has no such collective or the rows do not split in equal parts.
static FailureOr<std::tuple<int32_t, int32_t, int64_t>>
getShardedCodes(Operation *op, RankedTensorType full, int64_t world,
                std::optional<CollectiveKind> kind) {
  std::optional<int32_t> datatype =
      getElementTypeCode(full.getElementType(), kNcclDatatypes);
  std::optional<int32_t> reduction =
      kind ? getReductionCode(toReduction(*kind), kNcclOps) : 0;
  if (!datatype || !reduction)
    return op->emitOpError() << DiagnosticCode::NotLowered
                             << "NCCL has no collective of this kind on "
                             << full.getElementType() << " elements";
  if (!full.hasStaticShape() || full.getRank() == 0 ||
      full.getDimSize(0) % world != 0)
    return op->emitOpError()
           << DiagnosticCode::UnevenShards << "splits " << full << " among "
           << world
           << " ranks: NCCL's reduce-scatter and all-gather take parts of "
              "equal static size (the first dimension a multiple of the "
              "world size)";
  return std::make_tuple(*datatype, *reduction, full.getNumElements() / world);
}

/// `flat`'s elements [rank * count, (rank + 1) * count): this rank's part.
static Value getPart(OpBuilder &b, Location loc, Value flat, int64_t rank,
                     int64_t count) {
  return memref::SubViewOp::create(
      b, loc, flat, ArrayRef<int64_t>{rank * count}, ArrayRef<int64_t>{count},
      ArrayRef<int64_t>{1});
}

/// `ga.reduce_scatter` reduces the whole input's buffer in place (the
/// accumulator itself when private, else a copy) and reads back this rank's
/// rows; `ga.all_gather` writes this rank's rows into a new buffer of the
/// whole tensor, where NCCL fills in the other ranks' rows. Both are in
/// place as NCCL defines it: this rank's part is a view of the whole buffer
/// at rank * count.
LogicalResult ConvertGAToNCCLPass::lowerSharded(Operation *op) {
  Location loc = op->getLoc();
  auto scatter = dyn_cast<ReduceScatterOp>(op);
  auto gather = dyn_cast<AllGatherOp>(op);
  auto full = cast<RankedTensorType>(scatter ? scatter.getInput().getType()
                                             : gather.getResult().getType());
  int64_t rank = scatter ? scatter.getRank() : gather.getRank();
  int64_t world = scatter ? scatter.getWorld() : gather.getWorld();
  auto codes = getShardedCodes(op, full, world,
                               scatter ? std::optional(scatter.getKind())
                                       : std::nullopt);
  if (failed(codes))
    return failure();
  auto [datatype, reduction, count] = *codes;
  auto [begin, end] =
      ReduceScatterOp::shardRows(full.getDimSize(0), world, rank);
  OpBuilder b(op);
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
    buf.flat =
        full.getRank() == 1
            ? buf.buffer
            : memref::CollapseShapeOp::create(
                  b, loc,
                  MemRefType::get({full.getNumElements()},
                                  full.getElementType()),
                  buf.buffer, getCollapseAllReassociation(full.getRank()));
    Value part = getPart(b, loc, buf.flat, rank, count);
    NcclAllGatherOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, part,
                            buf.flat, datatype, world);
  }
  ++numCollectives;
  replaceShardedCollective(b, loc, op, full, buf.buffer, begin, end);
  return success();
}

void ConvertGAToNCCLPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs) {
    if (func.isExternal())
      continue;
    FailureOr<SmallVector<CollectiveGroup>> groups = collectCollectives(func);
    if (failed(groups))
      return signalPassFailure();
    for (CollectiveGroup &group : *groups) {
      // prepareRuntimeCall's codes and buffer; the address and count are the
      // op's lowering's (--ga-lower-library-ops), from the memref.
      FailureOr<RuntimeCodes> codes =
          getRuntimeCodes(group, kNcclDatatypes, kNcclOps, "NCCL");
      if (failed(codes))
        return signalPassFailure();
      Location loc = group.ops.back()->getLoc();
      OpBuilder b(group.ops.back());
      CollectiveBuffer buf = prepareBuffer(b, loc, group);
      // No stream yet: --ga-gpu-single-stream orders the op on the step's.
      NcclAllReduceOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                              buf.flat, codes->datatype, codes->reduction);
      ++numCollectives;
      replaceWithReduced(b, loc, group, buf, nullptr);
    }
    SmallVector<Operation *> sharded;
    func.walk([&](Operation *op) {
      if (isa<ReduceScatterOp, AllGatherOp>(op))
        sharded.push_back(op);
    });
    for (Operation *op : sharded)
      if (failed(lowerSharded(op)))
        return signalPassFailure();
  }
  eraseUnusedGrids(module);
}
