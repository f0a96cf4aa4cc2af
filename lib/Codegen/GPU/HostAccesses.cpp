//===- HostAccesses.cpp - host accesses of device memory into kernels -----===//
//
// After the linalg ops are kernels, what is left on the host of
// --ga-linalg-to-gpu-loops's input may still touch device buffers:
//
// * stores of host scalars (what bufferization makes of `tensor.from_elements`
//   and `tensor.insert`: a loss, a step counter) become kernels of one thread;
// * loads (a `tensor.extract` of a 0-d result feeding scalar math, as in
//   gradient clipping) move, with the pure scalar math that uses them, into
//   every kernel that needs them; from a snapshot taken at the load when the
//   buffer may change before such a kernel; read back through host memory
//   when host code itself needs the value.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

/// `memref.get_global` used by kernels is cloned into them: a global is
/// copied into the GPU module with the kernel, a host address is not.
static void sinkGlobals(func::FuncOp func) {
  SmallVector<memref::GetGlobalOp> globals;
  func.walk([&](memref::GetGlobalOp op) {
    if (!isInsideMappedLoop(op))
      globals.push_back(op);
  });
  for (memref::GetGlobalOp op : globals) {
    for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
      scf::ParallelOp k = getOutermostMappedLoop(use.getOwner());
      if (!k)
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(k.getBody());
      use.set(b.clone(*op)->getResult(0));
    }
    if (op->use_empty())
      op->erase();
  }
}

/// Kernel kinds that run one thread (wrapHostStores, snapshotHostLoad).
static constexpr StringLiteral kStoreKernel = "store";
static constexpr StringLiteral kSnapshotKernel = "snapshot";

static bool isSingleThreadKernel(scf::ParallelOp k) {
  auto kind = k->getAttrOfType<StringAttr>(GADialect::getKernelAttrName());
  return kind && (kind == kStoreKernel || kind == kSnapshotKernel);
}

/// Host stores into device buffers (what bufferization makes of
/// `tensor.from_elements` and `tensor.insert` of host scalars: a loss or a
/// step counter put into a 0-d tensor) become a kernel of one thread; a run of
/// adjacent stores is one kernel. The stored values and indices are host
/// values and become kernel arguments; device loads among them are sunk into
/// the kernel by sinkHostLoads.
void FunctionLowering::wrapHostStores(func::FuncOp func) {
  SmallVector<SmallVector<memref::StoreOp>> runs;
  func.walk([&](memref::StoreOp store) {
    if (isInsideMappedLoop(store) || isHostMemory(store.getMemref()))
      return;
    if (!runs.empty() && runs.back().back()->getNextNode() == store)
      runs.back().push_back(store);
    else
      runs.push_back({store});
  });
  for (SmallVector<memref::StoreOp> &run : runs) {
    OpBuilder b(run.front());
    Location loc = run.front().getLoc();
    Value one = constIndex(b, loc, 1);
    auto par =
        buildKernel(b, loc, {one}, [&](OpBuilder &nb, Location, ValueRange) {
          for (memref::StoreOp store : run)
            nb.clone(*store);
        });
    annotateKernel(par, run.front(), kStoreKernel);
    for (memref::StoreOp store : run)
      store->erase();
    ++counts.kernels;
  }
}

/// Copies the element that `load` reads into a fresh 0-d device buffer, in a
/// kernel of one thread at the place of the load, and returns a load of that
/// copy: kernels that use the value read the copy, which nothing overwrites
/// (the original buffer may be written between the load and a kernel that
/// uses the value, e.g. an accumulator by the next loop over micro-batches).
Value FunctionLowering::snapshotHostLoad(memref::LoadOp load) {
  OpBuilder b(load);
  Location loc = load.getLoc();
  auto type = MemRefType::get({}, load.getType());
  Value snapshot = memref::AllocOp::create(b, loc, type);
  Value one = constIndex(b, loc, 1);
  auto par =
      buildKernel(b, loc, {one}, [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value v = memref::LoadOp::create(nb, nloc, load.getMemref(),
                                         load.getIndices());
        memref::StoreOp::create(nb, nloc, v, snapshot, ValueRange{});
      });
  annotateKernel(par, load, kSnapshotKernel);
  ++counts.kernels;
  return memref::LoadOp::create(b, loc, snapshot, ValueRange{});
}

/// Moves above `load` the pure host ops, defined after it in its block, whose
/// results the ops of `slice` use and whose own operands are available at the
/// load (transitively: such ops may use each other). Fails, with an error at
/// the user, for an operand that cannot be made available there.
static LogicalResult
hoistSliceOperands(memref::LoadOp load,
                   const llvm::SetVector<Operation *> &slice) {
  Block *block = load->getBlock();
  auto definedAfter = [&](Value v) -> Operation * {
    Operation *def = v.getDefiningOp();
    if (!def || slice.contains(def) || def->getBlock() != block ||
        !load->isBeforeInBlock(def))
      return nullptr;
    return def;
  };
  // The ops to move, operands before users.
  llvm::SetVector<Operation *> moved;
  std::function<bool(Operation *)> collect = [&](Operation *def) {
    if (moved.contains(def))
      return true;
    if (!isMemoryEffectFree(def) || def->getNumRegions() != 0 ||
        def->hasTrait<OpTrait::IsTerminator>())
      return false;
    for (Value operand : def->getOperands())
      if (Operation *inner = definedAfter(operand))
        if (!collect(inner))
          return false;
    moved.insert(def);
    return true;
  };
  for (Operation *op : slice)
    for (Value operand : op->getOperands())
      if (Operation *def = definedAfter(operand))
        if (!collect(def))
          return op->emitOpError()
                 << "depends on a value defined after the device load it "
                    "uses (by '"
                 << def->getName()
                 << "', which is not pure host arithmetic); cannot move it "
                    "into the kernels";
  for (Operation *op : moved)
    op->moveBefore(load);
  return success();
}

/// The host computation that depends on `load` (pure ops without regions in
/// its block, in program order, the load first) into `slice`, and the
/// kernels that use it into `kernels`; the first host op that needs the
/// value otherwise (a scalar result, host control flow), or null.
static Operation *collectHostSlice(memref::LoadOp load,
                                   llvm::SetVector<Operation *> &slice,
                                   llvm::SetVector<scf::ParallelOp> &kernels) {
  SmallVector<Value> worklist(load->getResults());
  slice.insert(load);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (scf::ParallelOp k = getOutermostMappedLoop(user)) {
        kernels.insert(k);
        continue;
      }
      if (user->getBlock() == load->getBlock() && isMemoryEffectFree(user) &&
          user->getNumRegions() == 0 &&
          !user->hasTrait<OpTrait::IsTerminator>()) {
        if (slice.insert(user))
          llvm::append_range(worklist, user->getResults());
        continue;
      }
      return user;
    }
  }
  return nullptr;
}

/// Replaces `load` by a load of a host copy of `element` (the loaded element
/// itself, or a load of a 0-d device buffer holding it): a device-to-host
/// copy after the GPU lowering.
static void readBackThroughHost(memref::LoadOp load, Value element) {
  auto source = cast<memref::LoadOp>(element.getDefiningOp()).getMemref();
  OpBuilder b(load);
  Location loc = load.getLoc();
  auto hostType = MemRefType::get({}, load.getType());
  Value host = memref::AllocaOp::create(b, loc, hostType);
  memref::CopyOp::create(b, loc, source, host);
  Value v = memref::LoadOp::create(b, loc, host, ValueRange{});
  load.getResult().replaceAllUsesWith(v);
  if (element != load.getResult())
    element.getDefiningOp()->erase();
  load->erase();
}

/// Whether the buffer `root` that `load` reads may be written between the
/// load and one of `kernels` (then the kernels must read a copy of the
/// element taken at the load); an error when a kernel comes before the load.
static FailureOr<bool>
isOverwrittenBeforeKernels(memref::LoadOp load, Value root,
                           ArrayRef<scf::ParallelOp> kernels) {
  for (scf::ParallelOp k : kernels) {
    Operation *anchor = load->getBlock()->findAncestorOpInBlock(*k);
    if (!anchor || anchor->isBeforeInBlock(load))
      return k->emitOpError() << "uses a device value loaded after it";
  }
  for (scf::ParallelOp k : kernels) {
    Operation *anchor = load->getBlock()->findAncestorOpInBlock(*k);
    // Ops between the load and the kernel, and the op that holds the kernel
    // (a loop runs it again after its own writes; the kernel itself would
    // race with its own readers). A kernel of one thread (host stores) may
    // write what it reads: the value is computed at its start, before its
    // stores.
    for (Operation *it = load->getNextNode(); it;
         it = it == anchor ? nullptr : it->getNextNode())
      if (!(it == k.getOperation() && isSingleThreadKernel(k)) &&
          mayAccessBuffer(it, root, /*writesOnly=*/true))
        return true;
  }
  return false;
}

/// Clones `slice` at the start of each of `kernels`, whose uses of it then
/// read the clones.
static void sinkSliceIntoKernels(ArrayRef<Operation *> slice,
                                 ArrayRef<scf::ParallelOp> kernels) {
  for (scf::ParallelOp k : kernels) {
    OpBuilder b = OpBuilder::atBlockBegin(k.getBody());
    IRMapping map;
    for (Operation *op : slice)
      b.clone(*op, map);
    for (Operation *op : slice)
      for (Value orig : op->getResults())
        orig.replaceUsesWithIf(map.lookup(orig), [&](OpOperand &use) {
          return k->isProperAncestor(use.getOwner());
        });
  }
}

LogicalResult FunctionLowering::sinkHostLoads(func::FuncOp func) {
  sinkGlobals(func);
  SmallVector<memref::LoadOp> hostLoads;
  func.walk([&](memref::LoadOp load) {
    if (isInsideMappedLoop(load))
      return;
    if (!isHostMemory(load.getMemref()))
      hostLoads.push_back(load);
  });
  // Later loads first: a value computed from several loads (a statistic of
  // an earlier loop divided by another, say) is then sunk with the last of
  // them, and the earlier loads follow it into the same kernels.
  for (memref::LoadOp load : llvm::reverse(hostLoads)) {
    Value root = getViewRoot(load.getMemref());
    llvm::SetVector<Operation *> slice;
    llvm::SetVector<scf::ParallelOp> kernels;
    if (collectHostSlice(load, slice, kernels)) {
      // The host needs the value: read it back through a host buffer.
      // Kernels then get the host value as an argument. An element of a
      // buffer of higher rank is first copied into a 0-d device buffer of
      // its own.
      readBackThroughHost(load, load.getMemRefType().getRank() != 0
                                    ? snapshotHostLoad(load)
                                    : load.getResult());
      ++counts.readBacks;
      continue;
    }
    // Every operand of the slice that is not in it must be available at the
    // start of each kernel (defined above the load). A pure host value
    // defined after the load from values defined before it (a conversion of
    // another scalar, say) moves above the load; anything else is refused.
    if (failed(hoistSliceOperands(load, slice)))
      return failure();
    FailureOr<bool> overwritten =
        isOverwrittenBeforeKernels(load, root, kernels.getArrayRef());
    if (failed(overwritten))
      return failure();
    if (*overwritten) {
      Value copy = snapshotHostLoad(load);
      load.getResult().replaceAllUsesWith(copy);
      llvm::SetVector<Operation *> renamed;
      renamed.insert(copy.getDefiningOp());
      renamed.insert(std::next(slice.begin()), slice.end());
      slice = std::move(renamed);
      load->erase();
      ++counts.snapshots;
    }
    // Rematerialize the slice at the start of each kernel.
    sinkSliceIntoKernels(slice.getArrayRef(), kernels.getArrayRef());
    counts.sunk += kernels.size();
    for (Operation *op : llvm::reverse(slice))
      if (op->use_empty())
        op->erase();
  }
  return success();
}

/// Allows fused multiply-add in the floating-point arithmetic of the mapped
/// loops (nvcc's default -fmad=true): `contract` on every op with fastmath
