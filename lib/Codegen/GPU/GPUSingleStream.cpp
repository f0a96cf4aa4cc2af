//===- GPUSingleStream.cpp - all GPU work of a step on one stream ---------===//
//
// Replaces upstream `gpu-async-region` in the GPU lowering. That pass starts a
// stream for every block of launches and synchronizes the host with it (and
// destroys it) at the end of the block: once per micro-batch. Here every
// launch, allocation, free and copy of a function is chained on one token,
// which is carried through `scf.for` loops as an iteration argument: the host
// enqueues the whole micro-batch loop without waiting, and waits once, where
// it needs the device's results (a read-back, a call of a library that runs
// on a stream of its own, the return).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_GPUSINGLESTREAM
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// True if `op` or an op nested in it is GPU work that runs on a stream: an
/// op ordered by async tokens (gpu ops and the ga library ops alike: a loop
/// of products, e.g. a convolution's products per sample, takes the step's
/// stream too).
static bool containsGPUWork(Operation *op) {
  return op->walk([](gpu::AsyncOpInterface) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

struct GPUSingleStreamPass
    : public ga::impl::GPUSingleStreamBase<GPUSingleStreamPass> {
  void runOnOperation() override;

  /// Threads `token` (null: no stream yet) through `block`; returns the token
  /// at the end of the block.
  Value processBlock(Block &block, Value token);
  /// Makes the synchronous GPU op `op` asynchronous, after `token`.
  Value makeAsync(gpu::AsyncOpInterface op, Value token);
  /// Host synchronization before `op`: the stream's work is done after it.
  void synchronize(Operation *op, Value token);
  bool needsDeviceResults(Operation *op);
  /// `gpu.wait async` before `before`: a new stream.
  Value startStream(Operation *before);
  /// Replaces `ifOp` by one that also yields the token at the end of each
  /// branch (which continue from `token`); returns that result.
  Value threadThroughIf(scf::IfOp ifOp, Value token);

  /// Host buffers that copies from or to the device use: the host must wait
  /// for the stream before it accesses them.
  DenseSet<Value> copyBuffers;
};

} // namespace

Value GPUSingleStreamPass::makeAsync(gpu::AsyncOpInterface op, Value token) {
  Operation *raw = op.getOperation();
  op.addAsyncDependency(token);
  OpBuilder b(raw);
  SmallVector<Type> resultTypes(raw->getResultTypes());
  resultTypes.push_back(b.getType<gpu::AsyncTokenType>());
  OperationState state(raw->getLoc(), raw->getName(), raw->getOperands(),
                       resultTypes, raw->getAttrs(), raw->getSuccessors());
  state.propertiesAttr = raw->getPropertiesAsAttribute();
  Operation *async = b.create(state);
  raw->replaceAllUsesWith(async->getResults().drop_back());
  raw->erase();
  ++numAsyncOps;
  return async->getResults().back();
}

/// A host wait for the stream of `token`, and its release (the ops'
/// descriptions say why not `gpu.wait`).
void GPUSingleStreamPass::synchronize(Operation *op, Value token) {
  OpBuilder b(op);
  StreamSynchronizeOp::create(b, op->getLoc(), token);
  StreamReleaseOp::create(b, op->getLoc(), token);
  ++numSynchronizations;
}

bool GPUSingleStreamPass::needsDeviceResults(Operation *op) {
  if (op->hasTrait<OpTrait::ReturnLike>() &&
      isa<func::FuncOp>(op->getParentOp()))
    return true;
  // Host accesses to buffers that device copies read or write.
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return copyBuffers.contains(getViewRoot(load.getMemref()));
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return copyBuffers.contains(getViewRoot(store.getMemref()));
  // Calls of functions that are not host helpers without GPU work: other
  // libraries may run on streams of their own (the library ops, cuBLASLt
  // and NCCL, are ordered by their tokens before).
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    return !callee || callee.isExternal() || containsGPUWork(callee);
  }
  return isa<LLVM::CallOp>(op);
}

Value GPUSingleStreamPass::startStream(Operation *before) {
  OpBuilder b(before);
  ++numStreams;
  return gpu::WaitOp::create(b, before->getLoc(),
                             b.getType<gpu::AsyncTokenType>(), ValueRange{})
      .getAsyncToken();
}

Value GPUSingleStreamPass::threadThroughIf(scf::IfOp ifOp, Value token) {
  OpBuilder b(ifOp);
  SmallVector<Type> types(ifOp.getResultTypes());
  types.push_back(token.getType());
  auto newIf = scf::IfOp::create(b, ifOp.getLoc(), types, ifOp.getCondition(),
                                 /*withElseRegion=*/true);
  for (auto [from, to] : llvm::zip(ifOp->getRegions(), newIf->getRegions())) {
    to.getBlocks().clear();
    if (from.empty()) {
      OpBuilder yb = OpBuilder::atBlockEnd(&to.emplaceBlock());
      scf::YieldOp::create(yb, ifOp.getLoc(), ValueRange{});
    } else {
      to.takeBody(from);
    }
    Block &block = to.front();
    Value end = processBlock(block, token);
    if (!end)
      end = startStream(block.getTerminator());
    block.getTerminator()->insertOperands(
        block.getTerminator()->getNumOperands(), end);
  }
  ifOp->replaceAllUsesWith(newIf.getResults().drop_back());
  ifOp->erase();
  return newIf.getResults().back();
}

Value GPUSingleStreamPass::processBlock(Block &block, Value token) {
  for (Operation &opRef : llvm::make_early_inc_range(block)) {
    Operation *op = &opRef;
    if (auto async = dyn_cast<gpu::AsyncOpInterface>(op)) {
      if (!token)
        token = startStream(op);
      if (async.getAsyncToken()) {
        async.addAsyncDependency(token);
        token = async.getAsyncToken();
        continue;
      }
      token = makeAsync(async, token);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && containsGPUWork(loop)) {
      // The token is an iteration argument: launches of one iteration follow
      // those of the previous one on the same stream, with no host wait.
      if (!token)
        token = startStream(loop);
      IRRewriter rewriter(loop);
      Value init = token;
      auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
          rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
          [](OpBuilder &, Location, ArrayRef<BlockArgument> newArgs)
              -> SmallVector<Value> { return {newArgs.front()}; }));
      Block *body = newLoop.getBody();
      BlockArgument carried = body->getArguments().back();
      Value end = processBlock(*body, carried);
      // The body waited for its stream (a read-back): the next iteration
      // gets a new one.
      if (!end)
        end = startStream(body->getTerminator());
      auto yield = cast<scf::YieldOp>(body->getTerminator());
      yield->setOperand(yield->getNumOperands() - 1, end);
      token = newLoop.getResults().back();
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op); ifOp && containsGPUWork(ifOp)) {
      // Both branches continue the chain and yield their last token.
      if (!token)
        token = startStream(ifOp);
      token = threadThroughIf(ifOp, token);
      continue;
    }
    if (op->getNumRegions() && containsGPUWork(op)) {
      // Other region ops (scf.while, ...): the host waits before them and their
      // blocks use streams of their own.
      if (token)
        synchronize(op, token);
      token = Value();
      for (Region &region : op->getRegions())
        for (Block &nested : region) {
          Value end = processBlock(nested, Value());
          if (end)
            synchronize(nested.getTerminator(), end);
        }
      continue;
    }
    if (token && needsDeviceResults(op)) {
      synchronize(op, token);
      token = Value();
    }
  }
  return token;
}

void GPUSingleStreamPass::runOnOperation() {
  ModuleOp module = getOperation();
  WalkResult r = module.walk([](gpu::WaitOp wait) {
    wait.emitOpError() << "is already a stream synchronization; "
                          "ga-gpu-single-stream expects synchronous GPU ops";
    return WalkResult::interrupt();
  });
  if (r.wasInterrupted())
    return signalPassFailure();
  SmallVector<func::FuncOp> funcs;
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && containsGPUWork(func))
      funcs.push_back(func);
  if (funcs.empty())
    return;
  for (func::FuncOp func : funcs) {
    copyBuffers.clear();
    func.walk([&](gpu::MemcpyOp copy) {
      copyBuffers.insert(getViewRoot(copy.getDst()));
      copyBuffers.insert(getViewRoot(copy.getSrc()));
    });
    for (Block &block : func.getBody())
      if (Value end = processBlock(block, Value()))
        synchronize(block.getTerminator(), end);
  }
}
