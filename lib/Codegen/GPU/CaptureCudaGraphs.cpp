//===- CaptureCudaGraphs.cpp - a micro-batch loop body as a CUDA graph ----===//
//
// After ga-gpu-single-stream, the body of a micro-batch loop is a chain of
// launches (and library calls) on the step's one stream. When it is the same
// in every iteration (ga-device-iteration-index), the host records it once
// with stream capture (`ga.graph_capture`) and launches the recorded graph
// once per iteration (`ga.graph_launch`): one host API call per micro-batch
// instead of one per kernel. Anything that a graph cannot replay exactly
// leaves the loop as it is, with a remark. --ga-lower-library-ops makes the
// graph ops the runtime's calls.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CAPTURECUDAGRAPHS
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

bool containsGPUWork(Operation *op) {
  return op->walk([](gpu::AsyncOpInterface) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether the memref `value` is device memory: a `gpu.alloc` or an argument
/// of the function (device memory by the contract of the lowering).
bool isDeviceBuffer(Value value) {
  Value root = getViewRoot(value);
  if (auto arg = dyn_cast<BlockArgument>(root))
    return isa<func::FuncOp>(arg.getOwner()->getParentOp());
  return root.getDefiningOp<gpu::AllocOp>() != nullptr;
}

/// Whether the memref `value` is host memory after
/// ga-place-buffers-on-device: a stack buffer, a global, or an allocation
/// that stayed on the host.
bool isHostBuffer(Value value) {
  return isHostMemory(value) ||
         getViewRoot(value).getDefiningOp<memref::AllocOp>() != nullptr;
}

/// Why a graph cannot record `op`, a top-level op of a loop body; empty if it
/// can: work ordered on the stream by async tokens (gpu ops and the ga
/// library ops alike) whose memory effects are all on device buffers, or a
/// pure host op.
std::string whyNotCapturable(Operation *op) {
  if (isa<gpu::AllocOp>(op))
    return "allocates device memory in every iteration";
  if (isa<gpu::DeallocOp>(op))
    return "frees device memory in every iteration";
  if (isa<gpu::WaitOp, StreamSynchronizeOp, StreamReleaseOp>(op))
    return "is a host synchronization";
  // Another stream would have to be captured with it.
  if (isa<StreamWaitOp>(op))
    return "is a wait between streams";
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
    return isDeviceBuffer(copy.getSrc()) && isDeviceBuffer(copy.getDst())
               ? ""
               : "copies from or to host memory (a read-back)";
  // A collective is issued on a communicator that a graph would have to
  // record too (the all-reduces and reduce-scatters after the
  // micro-batches, on a communication stream of their own with
  // ga-overlap-all-reduce; the all-gathers of a sharded step's parameters
  // in the micro-batches): not recorded.
  if (isa<NcclAllReduceOp, NcclReduceScatterOp, NcclAllGatherOp>(op))
    return "is a collective between ranks";
  if (isa<gpu::AsyncOpInterface>(op)) {
    // A kernel launch reads and writes device memory by the contract of the
    // lowering (its effects are its kernel's).
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return isa<gpu::LaunchFuncOp>(op) ? "" : "has unknown memory effects";
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances)
      if (!effect.getValue() || isHostBuffer(effect.getValue()))
        return "accesses memory on the host";
    return "";
  }
  if (isa<func::CallOp>(op))
    return "is a call that is not ordered on the step's stream";
  if (op->getNumRegions())
    return "is host control flow inside the loop";
  if (!isMemoryEffectFree(op))
    return "accesses memory on the host";
  return "";
}

struct CaptureCudaGraphsPass
    : public ga::impl::CaptureCudaGraphsBase<CaptureCudaGraphsPass> {
  void runOnOperation() override;

  /// Why `loop` cannot be captured (and the op to name), or success.
  LogicalResult checkCapturable(scf::ForOp loop);
  /// Follows the chain of stream work through `body` from `chain` (the
  /// token the body starts from) to the token it ends with; loops nested in
  /// the body are followed through their bodies.
  LogicalResult checkChain(Block &body, Value &chain);
  void capture(scf::ForOp loop);
};

} // namespace

/// Emits the remark for `op` in `loop` and fails.
static LogicalResult refuse(Operation *op, const Twine &reason) {
  op->emitRemark() << "loop not captured as a CUDA graph: '" << op->getName()
                   << "' " << reason;
  return failure();
}

LogicalResult CaptureCudaGraphsPass::checkCapturable(scf::ForOp loop) {
  auto tokenType = gpu::AsyncTokenType::get(loop.getContext());
  if (loop.getNumRegionIterArgs() != 1 ||
      loop.getRegionIterArgs().front().getType() != tokenType)
    return refuse(loop, "carries values other than the stream's token");
  // The body in program order: one chain of stream work, from the carried
  // token to the yielded one.
  Value chain = loop.getRegionIterArgs().front();
  if (failed(checkChain(*loop.getBody(), chain)))
    return failure();
  // Every iteration must enqueue the same work with the same arguments.
  SmallVector<Value> worklist{loop.getInductionVar()};
  DenseSet<Value> dependent;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!isMemoryEffectFree(user) || user->getNumRegions())
        return refuse(user, "uses a value that depends on the induction "
                            "variable (a graph replays the arguments of its "
                            "first iteration)");
      for (Value r : user->getResults())
        if (dependent.insert(r).second)
          worklist.push_back(r);
    }
  }
  return success();
}

LogicalResult CaptureCudaGraphsPass::checkChain(Block &body, Value &chain) {
  auto tokenType = gpu::AsyncTokenType::get(body.getParentOp()->getContext());
  for (Operation &op : body.without_terminator()) {
    // A loop nested in the body (the groups of a grouped convolution as
    // library products, say) is captured with it: stream capture records
    // every iteration's work, so it must carry the stream's token through
    // work that is itself capturable. Its bounds may not depend on the
    // captured loop's induction variable (checked with the other uses).
    if (auto inner = dyn_cast<scf::ForOp>(&op)) {
      if (inner.getNumRegionIterArgs() != 1 ||
          inner.getRegionIterArgs().front().getType() != tokenType ||
          inner.getInitArgs().front() != chain)
        return refuse(&op, "is a nested loop that does not carry the "
                           "stream's token");
      Value innerChain = inner.getRegionIterArgs().front();
      if (failed(checkChain(*inner.getBody(), innerChain)))
        return failure();
      chain = inner.getResult(0);
      continue;
    }
    std::string why = whyNotCapturable(&op);
    if (!why.empty())
      return refuse(&op, why);
    if (auto async = dyn_cast<gpu::AsyncOpInterface>(&op)) {
      if (async.getAsyncDependencies().size() != 1 ||
          async.getAsyncDependencies().front() != chain ||
          !async.getAsyncToken())
        return refuse(&op, "is not ordered after the body's previous GPU op "
                           "on the stream");
      chain = async.getAsyncToken();
    }
  }
  Operation *yield = body.getTerminator();
  if (yield->getNumOperands() != 1 || yield->getOperand(0) != chain)
    return refuse(yield, "does not yield the token of the body's last GPU op");
  chain = yield->getOperand(0);
  return success();
}

void CaptureCudaGraphsPass::capture(scf::ForOp loop) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value init = loop.getInitArgs().front();
  // The body of the first iteration, recorded on the stream.
  auto captureOp = GraphCaptureOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()),
      b.getType<gpu::AsyncTokenType>(), ValueRange{init});
  Block &body = captureOp.getBody().emplaceBlock();
  IRMapping map;
  map.map(loop.getInductionVar(), loop.getLowerBound());
  map.map(loop.getRegionIterArgs().front(), init);
  OpBuilder bb = OpBuilder::atBlockEnd(&body);
  for (Operation &op : loop.getBody()->without_terminator())
    bb.clone(op, map);
  GraphYieldOp::create(
      bb, loc,
      map.lookupOrDefault(loop.getBody()->getTerminator()->getOperand(0)));
  Value graph = captureOp.getGraph();
  auto replay = scf::ForOp::create(
      b, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      ValueRange{captureOp.getAsyncToken()},
      [&](OpBuilder &lb, Location lloc, Value, ValueRange args) {
        auto launch = GraphLaunchOp::create(
            lb, lloc, lb.getType<gpu::AsyncTokenType>(), args.front(), graph);
        scf::YieldOp::create(lb, lloc, launch.getAsyncToken());
      });
  replay->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  b.setInsertionPointAfter(replay);
  GraphDestroyOp::create(b, loc, graph);
  loop->replaceAllUsesWith(replay->getResults());
  loop->erase();
}

void CaptureCudaGraphsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<scf::ForOp> loops;
  // Outermost first: a captured loop takes the loops nested in it into its
  // graph (one graph per micro-batch); a nested loop is tried on its own
  // only when the loop around it cannot be captured.
  module.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    if (containsGPUWork(loop))
      loops.push_back(loop);
  });
  if (loops.empty())
    return;

  // The loops inside a captured one (erased with it).
  llvm::SmallPtrSet<Operation *, 8> taken;
  for (scf::ForOp loop : loops) {
    if (taken.contains(loop))
      continue;
    // A graph replayed once costs its capture and instantiation on top of
    // the launches it replaces (N = 1, a remainder loop of one micro-batch).
    if (std::optional<APInt> trips = loop.getStaticTripCount();
        trips && trips->ule(1)) {
      ++numOnce;
      continue;
    }
    if (failed(checkCapturable(loop))) {
      ++numLeft;
      continue;
    }
    loop.getBody()->walk([&](scf::ForOp inner) { taken.insert(inner); });
    capture(loop);
    ++numCaptured;
  }
}
