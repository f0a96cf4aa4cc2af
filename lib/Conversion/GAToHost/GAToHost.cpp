//===- GAToHost.cpp - collectives to a host runtime's start/wait calls ----===//
//
// --convert-ga-to-host-collectives: `ga.all_reduce` / `shard.all_reduce` to
// in-place calls of a host runtime that hands each buffer to the program's
// own communication engine (torch.distributed in the PyTorch frontend, see
// python/ga_mlir/torch/_distributed.py):
//
//   int32_t gaHostAllReduceStart(void *buffer, int64_t count, int32_t dtype,
//                                int32_t op, int64_t id);
//   int32_t gaHostAllReduceWait(int64_t id);
//
// The start call stays where the collective was (right after the loop that
// produced the bucket); the wait call and the read-back of the reduced
// tensor move down to the first op that uses the result, so that whatever
// comes in between overlaps the collective.
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

static constexpr StringLiteral kStartFn = "gaHostAllReduceStart";
static constexpr StringLiteral kWaitFn = "gaHostAllReduceWait";
static constexpr StringLiteral kShardedStartFn = "gaHostShardedStart";

/// The runtime's element type codes (see the pass description): signed and
/// signless integers alike, no unsigned ones.
static constexpr ElementTypeCodes kDatatypes = {
    /*f16=*/2,
    /*bf16=*/3,
    /*f32=*/0,
    /*f64=*/1,
    /*signless=*/{4, 5, 6, 7},
    /*signedInt=*/{4, 5, 6, 7}};

/// The runtime's reduction codes: sum, mean, max, min.
static constexpr ReductionCodes kOps = {0, 1, 2, 3, -1, -1, -1, -1};

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
  func::FuncOp declare(ModuleOp module, StringRef name, ArrayRef<Type> inputs) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(inputs, {b.getI32Type()}));
    fn.setPrivate();
    return fn;
  }
  LogicalResult lower(ModuleOp module, CollectiveGroup &group, int64_t id);
  LogicalResult lowerSharded(ModuleOp module, Operation *op, int64_t id);
};
} // namespace

LogicalResult ConvertGAToHostCollectivesPass::lower(ModuleOp module,
                                                    CollectiveGroup &group,
                                                    int64_t id) {
  Operation *anchor = group.ops.back();
  Location loc = anchor->getLoc();
  // Where the result is first needed: computed before anything is rewritten.
  SmallVector<Operation *> views;
  Operation *waitPoint = firstUser(anchor->getBlock(), group.ops, views);
  OpBuilder b(anchor);
  FailureOr<RuntimeCallOperands> call = prepareRuntimeCall(
      b, group, kDatatypes, kOps, "the host collectives runtime");
  if (failed(call))
    return failure();
  auto ptr = LLVM::LLVMPointerType::get(&getContext());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  func::FuncOp start = declare(module, kStartFn, {ptr, i64, i32, i32, i64});
  func::FuncOp wait = declare(module, kWaitFn, {i64});
  Value idValue = arith::ConstantIntOp::create(b, loc, i64, id);
  func::CallOp::create(b, loc, start,
                       ValueRange{call->address, call->count, call->datatype,
                                  call->reduction, idValue});
  ++numCollectives;

  // The status of a failed collective is the engine's to report (the
  // frontend raises its error after the call); the step itself goes on.
  b.setInsertionPoint(waitPoint);
  func::CallOp::create(b, loc, wait, ValueRange{idValue});
  replaceWithReduced(b, loc, group, call->buf, nullptr);
  for (Operation *view : views)
    view->moveBefore(waitPoint);
  return success();
}

/// `ga.reduce_scatter` and `ga.all_gather`, in place on a buffer of the
/// whole tensor: the reduce-scatter reduces the accumulator's buffer (this
/// rank's rows are valid afterwards, and read back); the all-gather writes
/// this rank's rows into a new buffer of the whole tensor, and the engine
/// fills in the other ranks' rows.
LogicalResult ConvertGAToHostCollectivesPass::lowerSharded(ModuleOp module,
                                                           Operation *op,
                                                           int64_t id) {
  Location loc = op->getLoc();
  auto scatter = dyn_cast<ReduceScatterOp>(op);
  auto gather = dyn_cast<AllGatherOp>(op);
  auto full = cast<RankedTensorType>(scatter ? scatter.getInput().getType()
                                             : gather.getResult().getType());
  std::optional<int32_t> dtype =
      getElementTypeCode(full.getElementType(), kDatatypes);
  if (!dtype)
    return op->emitError()
           << "the host collectives runtime has no collective on "
           << full.getElementType() << " elements";
  int64_t rank = scatter ? scatter.getRank() : gather.getRank();
  int64_t world = scatter ? scatter.getWorld() : gather.getWorld();
  auto [begin, end] =
      ReduceScatterOp::shardRows(full.getDimSize(0), world, rank);
  OpBuilder b(op);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(&getContext());
  func::FuncOp start =
      declare(module, kShardedStartFn, {ptr, i64, i32, i32, i64, i32, i64});
  func::FuncOp wait = declare(module, kWaitFn, {i64});
  SmallVector<Operation *> views;
  Operation *waitPoint = firstUser(op->getBlock(), {op}, views);

  CollectiveBuffer buf;
  if (scatter) {
    CollectiveGroup group;
    group.ops.push_back(op);
    buf = prepareBuffer(b, loc, group);
  } else {
    // A new buffer of the whole tensor, this rank's rows written in.
    // A tensor of its own (not a memref.alloc: bufferization owns and
    // frees it like any other tensor), written through its buffer.
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
  }
  Value idValue = arith::ConstantIntOp::create(b, loc, i64, id);
  func::CallOp::create(
      b, loc, start,
      ValueRange{
          getFirstElementAddress(b, loc, buf.flat),
          arith::ConstantIntOp::create(b, loc, i64, full.getNumElements()),
          arith::ConstantIntOp::create(b, loc, i32, *dtype),
          arith::ConstantIntOp::create(
              b, loc, i32,
              scatter ? *getReductionCode(toReduction(scatter.getKind()), kOps)
                      : 0),
          idValue, arith::ConstantIntOp::create(b, loc, i32, scatter ? 0 : 1),
          arith::ConstantIntOp::create(b, loc, i64, full.getDimSize(0))});
  ++numCollectives;

  b.setInsertionPoint(waitPoint);
  func::CallOp::create(b, loc, wait, ValueRange{idValue});
  Value result = bufferization::ToTensorOp::create(
      b, loc, full, buf.buffer, /*restrict=*/true, /*writable=*/true);
  if (scatter) {
    SmallVector<OpFoldResult> offsets(full.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(full.getRank(), b.getIndexAttr(1));
    for (int64_t size : full.getShape())
      sizes.push_back(b.getIndexAttr(size));
    offsets[0] = b.getIndexAttr(begin);
    sizes[0] = b.getIndexAttr(end - begin);
    result =
        tensor::ExtractSliceOp::create(b, loc, result, offsets, sizes, strides);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  for (Operation *view : views)
    view->moveBefore(waitPoint);
  return success();
}

void ConvertGAToHostCollectivesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  int64_t id = 0;
  for (func::FuncOp func : funcs) {
    if (func.isExternal())
      continue;
    FailureOr<SmallVector<CollectiveGroup>> groups = collectCollectives(func);
    if (failed(groups))
      return signalPassFailure();
    for (CollectiveGroup &group : *groups)
      if (failed(lower(module, group, id++)))
        return signalPassFailure();
    SmallVector<Operation *> sharded;
    func.walk([&](Operation *op) {
      if (isa<ReduceScatterOp, AllGatherOp>(op))
        sharded.push_back(op);
    });
    for (Operation *op : sharded)
      if (failed(lowerSharded(module, op, id++)))
        return signalPassFailure();
  }
  eraseUnusedGrids(module);
}
