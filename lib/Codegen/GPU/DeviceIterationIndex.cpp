//===- DeviceIterationIndex.cpp - a loop's index in a device buffer -------===//
//
// A CUDA graph replays the launches it recorded with the arguments they had
// then. For the body of a micro-batch loop to be recorded once, nothing that
// it hands to a kernel or a library call may change between iterations; what
// does today is the induction variable (the offset of the per-sample slices).
// This pass moves it into a 0-d device buffer that kernels of one thread set
// and advance, and makes every kernel recompute what it needs of it from that
// buffer. It runs on mapped loops, so ga-verify checks it on the CPU.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/Codegen/GPU/Passes.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::ga {
#define GEN_PASS_DEF_DEVICEITERATIONINDEX
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

namespace {

/// Kernel kinds (the `ga.kernel` attribute, part of the kernel's name).
constexpr StringLiteral kInitKernel = "index_init";
constexpr StringLiteral kStepKernel = "index_step";
constexpr StringLiteral kStageKernel = "stage";

/// Threads per block of the one-thread kernels (one warp).
constexpr unsigned kWarp = 32;

bool isPureHostOp(Operation *op) {
  return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
         !op->hasTrait<OpTrait::IsTerminator>();
}

/// Whether `op` is stream-ordered library work outside the kernels (a
/// `ga.blas_matmul`): its memref operands are given to the library as
/// pointers, which a graph records.
bool isLibraryWork(Operation *op) {
  return isa<gpu::AsyncOpInterface>(op) && !getOutermostMappedLoop(op);
}

struct DeviceIterationIndexPass
    : public ga::impl::DeviceIterationIndexBase<DeviceIterationIndexPass> {
  void runOnOperation() override;

  void rewriteLoop(scf::ForOp loop);
  /// Clones into `b` the ops of `slice` that `values` need, with the
  /// induction variable read from `index`; returns the mapping.
  IRMapping rematerialize(OpBuilder &b, Location loc, ArrayRef<Value> values);
  /// An op of the loop body that may write the buffer `root`, or null.
  Operation *findWriterInLoop(Value root);
  /// Whether `view` can be staged into a fixed buffer (else a remark says
  /// why).
  bool canStage(Value view);
  /// Copies the view `view` into a fixed buffer in a kernel that rebuilds it
  /// from the index; returns the buffer.
  Value stage(Value view);

  scf::ForOp loop;
  Value index;
  /// Host ops in the loop that depend on its induction variable (pure, no
  /// regions).
  llvm::SetVector<Operation *> slice;
};

} // namespace

IRMapping DeviceIterationIndexPass::rematerialize(OpBuilder &b, Location loc,
                                                  ArrayRef<Value> values) {
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> worklist(values);
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (def && slice.contains(def) && needed.insert(def))
      llvm::append_range(worklist, def->getOperands());
  }
  IRMapping map;
  Value loaded = memref::LoadOp::create(b, loc, index, ValueRange{});
  map.map(loop.getInductionVar(),
          arith::IndexCastOp::create(b, loc, b.getIndexType(), loaded));
  for (Operation *op : mlir::topologicalSort(needed))
    b.clone(*op, map);
  return map;
}

Operation *DeviceIterationIndexPass::findWriterInLoop(Value root) {
  Operation *writer = nullptr;
  // Library ops say what they write (MemoryEffectOpInterface).
  WalkResult r = loop.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    writer = op;
    if (isa<scf::ParallelOp>(op) || op->getNumRegions() == 0)
      return mayAccessBuffer(op, root, /*writesOnly=*/true)
                 ? WalkResult::interrupt()
                 : WalkResult::skip();
    return WalkResult::advance();
  });
  return r.wasInterrupted() ? writer : nullptr;
}

bool DeviceIterationIndexPass::canStage(Value view) {
  auto type = cast<MemRefType>(view.getType());
  Operation *def = view.getDefiningOp();
  if (!type.hasStaticShape()) {
    def->emitRemark() << "not staged for a library call: the micro-batch "
                         "slice has a dynamic shape";
    return false;
  }
  if (Operation *writer = findWriterInLoop(getViewRoot(view))) {
    def->emitRemark() << "not staged for a library call: '" << writer->getName()
                      << "' in the loop may write the sliced buffer";
    return false;
  }
  return true;
}

Value DeviceIterationIndexPass::stage(Value view) {
  auto type = cast<MemRefType>(view.getType());
  Location loc = view.getLoc();
  OpBuilder b(loop);
  auto fixedType =
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace());
  Value fixed = memref::AllocOp::create(b, loc, fixedType);
  b.setInsertionPointAfterValue(view);
  SmallVector<Value> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(constIndex(b, loc, size));
  if (sizes.empty())
    sizes.push_back(constIndex(b, loc, 1));
  auto copy = buildKernelLoop(
      b, loc, 256, sizes, [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        IRMapping map = rematerialize(nb, nloc, {view});
        ValueRange at = type.getRank() ? ivs : ValueRange{};
        Value v = memref::LoadOp::create(nb, nloc, map.lookup(view), at);
        memref::StoreOp::create(nb, nloc, v, fixed, at);
      });
  annotateKernel(copy, copy, kStageKernel);
  ++numStaged;
  return fixed;
}

void DeviceIterationIndexPass::rewriteLoop(scf::ForOp forOp) {
  loop = forOp;
  slice.clear();
  // The host ops that depend on the induction variable, the kernels that use
  // them, and the views that library ops take.
  llvm::SetVector<scf::ParallelOp> kernels;
  llvm::SetVector<Value> described;
  bool hostUse = false;
  SmallVector<Value> worklist{loop.getInductionVar()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (scf::ParallelOp k = getOutermostMappedLoop(user); k && k != user) {
        kernels.insert(k);
        continue;
      }
      if (isLibraryWork(user) && isa<MemRefType>(v.getType())) {
        described.insert(v);
        continue;
      }
      if (isPureHostOp(user)) {
        if (slice.insert(user))
          llvm::append_range(worklist, user->getResults());
        continue;
      }
      // Anything else (a kernel's grid, an allocation's size, a call) keeps
      // the body dependent on the iteration.
      hostUse = true;
    }
  }
  if (kernels.empty() && described.empty())
    return;
  // The body would still differ between iterations, so no graph will record
  // it (ga-capture-cuda-graphs says why): the index stays on the host rather
  // than costing a kernel per iteration.
  if (hostUse ||
      !llvm::all_of(described, [&](Value view) { return canStage(view); }))
    return;

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  index = memref::AllocOp::create(b, loc, MemRefType::get({}, b.getI64Type()));
  Value one = constIndex(b, loc, 1);
  auto init = buildKernelLoop(
      b, loc, kWarp, {one}, [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value lb = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(),
                                              loop.getLowerBound());
        memref::StoreOp::create(nb, nloc, lb, index, ValueRange{});
      });
  annotateKernel(init, init, kInitKernel);

  for (scf::ParallelOp k : kernels) {
    llvm::SetVector<Value> used;
    k.getBody()->walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        if (operand == loop.getInductionVar() ||
            (operand.getDefiningOp() &&
             slice.contains(operand.getDefiningOp())))
          used.insert(operand);
    });
    OpBuilder kb = OpBuilder::atBlockBegin(k.getBody());
    IRMapping map = rematerialize(kb, k.getLoc(), used.getArrayRef());
    for (Value v : used)
      v.replaceUsesWithIf(map.lookup(v), [&](OpOperand &use) {
        return k->isProperAncestor(use.getOwner());
      });
    ++numSunk;
  }

  // Views handed to library ops: their pointers are baked into a graph.
  for (Value view : described) {
    Value fixed = stage(view);
    view.replaceUsesWithIf(
        fixed, [&](OpOperand &use) { return isLibraryWork(use.getOwner()); });
  }

  OpBuilder eb(loop.getBody()->getTerminator());
  auto step = buildKernelLoop(
      eb, loc, kWarp, {constIndex(eb, loc, 1)},
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value cur = memref::LoadOp::create(nb, nloc, index, ValueRange{});
        Value inc = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(),
                                               loop.getStep());
        Value next = arith::AddIOp::create(nb, nloc, cur, inc);
        memref::StoreOp::create(nb, nloc, next, index, ValueRange{});
      });
  annotateKernel(step, step, kStepKernel);

  llvm::SetVector<Operation *> sorted = mlir::topologicalSort(slice);
  for (Operation *op : llvm::reverse(sorted))
    if (op->use_empty())
      op->erase();
  ++numLoops;
}

void DeviceIterationIndexPass::runOnOperation() {
  // Loops around kernels or library calls, innermost first; not loops inside
  // kernels.
  SmallVector<scf::ForOp> loops;
  getOperation().walk([&](scf::ForOp forOp) {
    if (isInsideMappedLoop(forOp))
      return;
    bool hasGPUWork = llvm::any_of(*forOp.getBody(), [](Operation &op) {
      auto par = dyn_cast<scf::ParallelOp>(op);
      return (par && getOutermostMappedLoop(par) == par) || isLibraryWork(&op);
    });
    if (hasGPUWork)
      loops.push_back(forOp);
  });
  for (scf::ForOp forOp : loops)
    rewriteLoop(forOp);
}
