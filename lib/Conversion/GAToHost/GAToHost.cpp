//===- GAToHost.cpp - collectives to a host engine's start/wait ops -------===//
//
// --convert-ga-to-host-collectives: `ga.all_reduce` / `shard.all_reduce`
// (and ZeRO-1/FSDP's `ga.reduce_scatter` / `ga.all_gather`) to in-place
// `ga.host_collective_start` / `ga.host_collective_wait` ops on the buffer
// of the reduced (or gathered) tensor, which a host runtime hands to the
// program's own communication engine (torch.distributed in the PyTorch
// frontend, see python/ga_mlir/torch/_distributed.py).
//
// The start op stays where the collective was (right after the loop that
// produced the bucket); the wait op and the read-back of the reduced
// tensor move down to the first op that uses the result, so that whatever
// comes in between overlaps the collective. The ops declare what they read
// and write, so that after bufferization the buffers' live ranges are
// known (deallocation, --ga-share-buffers, the memory report);
// --ga-lower-host-collectives makes them runtime calls after that.
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"

#include "../CollectiveLowering.h"
#include "ga/IR/GAShardOps.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONVERTGATOHOSTCOLLECTIVES
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

/// Whether `op` only views its tensor operand (no computation): the views
/// of a bucket's gradients move down with the wait.
static bool isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp>(op);
}

/// The first op of `block` that reads a result of `ops` (itself or in one of
/// its regions) other than through views, or the block's terminator; the
/// views in between are collected into `views`.
static Operation *firstUser(Block *block, ArrayRef<Operation *> ops,
                            SmallVectorImpl<Operation *> &views) {
  Operation *first = block->getTerminator();
  SmallVector<Operation *> worklist(ops.begin(), ops.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Operation *user : op->getUsers()) {
      if (user->getBlock() == block && isView(user)) {
        if (!llvm::is_contained(views, user)) {
          views.push_back(user);
          worklist.push_back(user);
        }
        continue;
      }
      if (Operation *ancestor = block->findAncestorOpInBlock(*user))
        if (ancestor->isBeforeInBlock(first))
          first = ancestor;
    }
  }
  llvm::sort(views,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return first;
}

namespace {
struct ConvertGAToHostCollectivesPass
    : public ga::impl::ConvertGAToHostCollectivesBase<
          ConvertGAToHostCollectivesPass> {
  using ConvertGAToHostCollectivesBase::ConvertGAToHostCollectivesBase;

  void runOnOperation() override;

private:
  LogicalResult lower(CollectiveGroup &group, int64_t id);
  LogicalResult lowerSharded(Operation *op, int64_t id);
};
} // namespace

LogicalResult ConvertGAToHostCollectivesPass::lower(CollectiveGroup &group,
                                                    int64_t id) {
  Operation *anchor = group.ops.back();
  Location loc = anchor->getLoc();
  FailureOr<RuntimeCodes> codes =
      getRuntimeCodes(group, CollectiveRuntime::Host);
  if (failed(codes))
    return failure();
  // Where the result is first needed: computed before anything is rewritten.
  SmallVector<Operation *> views;
  Operation *waitPoint = firstUser(anchor->getBlock(), group.ops, views);
  OpBuilder b(anchor);
  CollectiveBuffer buf = prepareBuffer(b, loc, group);
  HostCollectiveStartOp::create(b, loc, buf.flat, /*input=*/Value(), id,
                                codes->datatype, codes->reduction,
                                /*rows=*/nullptr, /*input_offset=*/nullptr);
  ++numCollectives;

  // The status of a failed collective is the engine's to report (the
  // frontend raises its error after the call); the step itself goes on.
  b.setInsertionPoint(waitPoint);
  HostCollectiveWaitOp::create(b, loc, buf.flat, id);
  replaceWithReduced(b, loc, group, buf, nullptr);
  for (Operation *view : views)
    view->moveBefore(waitPoint);
  return success();
}

/// `ga.reduce_scatter` and `ga.all_gather`, in place on a buffer of the
/// whole tensor: the reduce-scatter reduces the accumulator's buffer (this
/// rank's rows are valid afterwards, and read back); the all-gather gives
/// this rank's rows and a new buffer of the whole tensor, which the start
/// op writes wholly (those rows, and the engine the other ranks' rows).
LogicalResult ConvertGAToHostCollectivesPass::lowerSharded(Operation *op,
                                                           int64_t id) {
  Location loc = op->getLoc();
  auto scatter = dyn_cast<ReduceScatterOp>(op);
  auto gather = dyn_cast<AllGatherOp>(op);
  auto full = cast<RankedTensorType>(scatter ? scatter.getInput().getType()
                                             : gather.getResult().getType());
  FailureOr<RuntimeCodes> codes = getShardedCodes(
      op, full, scatter ? std::optional(scatter.getKind()) : std::nullopt,
      CollectiveRuntime::Host);
  if (failed(codes))
    return failure();
  int64_t rank = scatter ? scatter.getRank() : gather.getRank();
  int64_t world = scatter ? scatter.getWorld() : gather.getWorld();
  int64_t rows = full.getDimSize(0);
  auto [begin, end] = ReduceScatterOp::shardRows(rows, world, rank);
  SmallVector<Operation *> views;
  Operation *waitPoint = firstUser(op->getBlock(), {op}, views);

  OpBuilder b(op);
  CollectiveBuffer buf;
  Value input;
  IntegerAttr inputOffset;
  if (scatter) {
    CollectiveGroup group;
    group.ops.push_back(op);
    buf = prepareBuffer(b, loc, group);
  } else {
    // A tensor of its own (not a memref.alloc: bufferization owns and
    // frees it like any other tensor).
    buf.tensor =
        bufferization::AllocTensorOp::create(b, loc, full, ValueRange());
    setBuffers(b, loc, buf);
    auto inputType = cast<RankedTensorType>(gather.getInput().getType());
    input = bufferization::ToBufferOp::create(
        b, loc,
        MemRefType::get(inputType.getShape(), inputType.getElementType()),
        gather.getInput(), /*read_only=*/b.getUnitAttr());
    inputOffset = b.getI64IntegerAttr(begin * (full.getNumElements() / rows));
  }
  HostCollectiveStartOp::create(b, loc, buf.flat, input, id, codes->datatype,
                                codes->reduction, b.getI64IntegerAttr(rows),
                                inputOffset);
  ++numCollectives;

  b.setInsertionPoint(waitPoint);
  HostCollectiveWaitOp::create(b, loc, buf.flat, id);
  replaceShardedCollective(b, loc, op, full, buf.buffer, begin, end);
  for (Operation *view : views)
    view->moveBefore(waitPoint);
  return success();
}

void ConvertGAToHostCollectivesPass::runOnOperation() {
  int64_t id = 0;
  if (failed(lowerCollectives(
          getOperation(),
          [&](CollectiveGroup &group) { return lower(group, id++); },
          [&](Operation *op) { return lowerSharded(op, id++); })))
    signalPassFailure();
}
