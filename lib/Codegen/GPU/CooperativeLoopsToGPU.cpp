//===- CooperativeLoopsToGPU.cpp - block-cooperative loops to gpu.launch --===//
//
// A block-cooperative loop (an `scf.parallel` over blocks marked
// `ga.cooperative`, made by --ga-linalg-to-gpu-loops for tiled contractions)
// is the form of a kernel whose threads work together through block-scope
// buffers: its body allocates them, runs thread-level `scf.parallel` loops one
// after the other (possibly inside uniform `scf.for` loops), and each
// thread-level loop sees everything the previous ones wrote. Run sequentially
// (on the CPU) that is plain loop semantics; on the GPU it is one launch whose
// block-scope buffers are workgroup (shared) memory and whose thread-level
// loops end in a barrier. Upstream --convert-parallel-loops-to-gpu only maps
// perfectly nested loops with side effects in the innermost one, hence this
// pass, which runs before it.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::ga {
#define GEN_PASS_DEF_COOPERATIVELOOPSTOGPU
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The processor of each induction variable of a mapped loop.
static std::optional<SmallVector<gpu::Processor>>
getProcessors(scf::ParallelOp op) {
  auto mapping = op->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  if (!mapping || mapping.size() != op.getNumLoops())
    return std::nullopt;
  SmallVector<gpu::Processor> result;
  for (Attribute a : mapping) {
    auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(a);
    if (!dim || !dim.getMap().isIdentity())
      return std::nullopt;
    result.push_back(dim.getProcessor());
  }
  return result;
}

static bool isThreadProcessor(gpu::Processor p) {
  return p == gpu::Processor::ThreadX || p == gpu::Processor::ThreadY ||
         p == gpu::Processor::ThreadZ;
}

static bool isBlockProcessor(gpu::Processor p) {
  return p == gpu::Processor::BlockX || p == gpu::Processor::BlockY ||
         p == gpu::Processor::BlockZ;
}

static unsigned dimOf(gpu::Processor p) {
  switch (p) {
  case gpu::Processor::BlockX:
  case gpu::Processor::ThreadX:
    return 0;
  case gpu::Processor::BlockY:
  case gpu::Processor::ThreadY:
    return 1;
  default:
    return 2;
  }
}

static bool isZero(Value v) {
  std::optional<int64_t> c = getConstantIntValue(v);
  return c && *c == 0;
}
static bool isOne(Value v) {
  std::optional<int64_t> c = getConstantIntValue(v);
  return c && *c == 1;
}

static bool containsThreadLoop(Operation *op) {
  bool found = false;
  op->walk([&](scf::ParallelOp inner) {
    if (inner != op)
      if (auto procs = getProcessors(inner))
        if (llvm::any_of(*procs, isThreadProcessor))
          found = true;
  });
  return found;
}

struct CooperativeLoopsToGPUPass
    : public ga::impl::CooperativeLoopsToGPUBase<CooperativeLoopsToGPUPass> {
  void runOnOperation() override;

  LogicalResult convert(scf::ParallelOp op);
  LogicalResult cloneBlockLevel(Block &src, OpBuilder &b, IRMapping &map,
                                gpu::LaunchOp launch,
                                ArrayRef<int64_t> blockSize,
                                DenseMap<Value, Value> &workgroup);
};

} // namespace

LogicalResult CooperativeLoopsToGPUPass::cloneBlockLevel(
    Block &src, OpBuilder &b, IRMapping &map, gpu::LaunchOp launch,
    ArrayRef<int64_t> blockSize, DenseMap<Value, Value> &workgroup) {
  // No barrier is needed after the last thread-level loop of a body.
  Operation *last = src.getTerminator()->getPrevNode();
  for (Operation &op : src.without_terminator()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (Value wg = workgroup.lookup(alloc.getResult())) {
        map.map(alloc.getResult(), wg);
        continue;
      }
    }

    if (auto par = dyn_cast<scf::ParallelOp>(op)) {
      std::optional<SmallVector<gpu::Processor>> procs = getProcessors(par);
      if (procs && llvm::all_of(*procs, isThreadProcessor)) {
        // One iteration per thread: the induction variables are the thread
        // ids; threads beyond the loop's bounds skip it (but still reach the
        // barrier).
        Value cond;
        for (auto [iv, lb, ub, step, proc] :
             llvm::zip(par.getInductionVars(), par.getLowerBound(),
                       par.getUpperBound(), par.getStep(), *procs)) {
          if (!isZero(lb) || !isOne(step))
            return par.emitOpError()
                   << "thread-level loop of a cooperative loop must start at "
                      "0 with step 1";
          Value tid = launch.getThreadIds().x;
          if (dimOf(proc) == 1)
            tid = launch.getThreadIds().y;
          else if (dimOf(proc) == 2)
            tid = launch.getThreadIds().z;
          map.map(iv, tid);
          std::optional<int64_t> n = getConstantIntValue(ub);
          if (n && *n == blockSize[dimOf(proc)])
            continue;
          Value inRange =
              arith::CmpIOp::create(b, par.getLoc(), arith::CmpIPredicate::ult,
                                    tid, map.lookupOrDefault(ub));
          cond = cond ? arith::AndIOp::create(b, par.getLoc(), cond, inRange)
                            .getResult()
                      : inRange;
        }
        auto emitBody = [&](OpBuilder &bb) {
          for (Operation &inner : par.getBody()->without_terminator())
            bb.clone(inner, map);
        };
        if (cond) {
          auto ifOp = scf::IfOp::create(b, par.getLoc(), cond,
                                        /*withElseRegion=*/false);
          OpBuilder tb = OpBuilder::atBlockBegin(ifOp.thenBlock());
          tb.setInsertionPoint(ifOp.thenBlock()->getTerminator());
          emitBody(tb);
        } else {
          emitBody(b);
        }
        if (&op != last)
          gpu::BarrierOp::create(b, par.getLoc());
        continue;
      }
      return op.emitOpError()
             << "inside a cooperative loop, only thread-level mapped loops "
                "are supported";
    }
    if (auto loop = dyn_cast<scf::ForOp>(op);
        loop && containsThreadLoop(loop)) {
      if (loop.getNumRegionIterArgs() != 0)
        return loop.emitOpError()
               << "a loop around thread-level loops cannot carry values";
      auto clone = scf::ForOp::create(b, loop.getLoc(),
                                      map.lookupOrDefault(loop.getLowerBound()),
                                      map.lookupOrDefault(loop.getUpperBound()),
                                      map.lookupOrDefault(loop.getStep()));
      map.map(loop.getInductionVar(), clone.getInductionVar());
      OpBuilder fb = OpBuilder::atBlockBegin(clone.getBody());
      fb.setInsertionPoint(clone.getBody()->getTerminator());
      if (failed(cloneBlockLevel(*loop.getBody(), fb, map, launch, blockSize,
                                 workgroup)))
        return failure();
      // The next iteration overwrites what this one's threads read.
      gpu::BarrierOp::create(fb, loop.getLoc());
      continue;
    }
    if (op.getNumRegions() != 0 && containsThreadLoop(&op))
      return op.emitOpError()
             << "around thread-level loops of a cooperative loop: only "
                "scf.for is supported";
    b.clone(op, map);
  }
  return success();
}

/// The block size of the cooperative loop `op`: per dimension, the largest
/// static extent of its thread-level loops.
static FailureOr<SmallVector<int64_t>> getBlockSize(scf::ParallelOp op) {
  SmallVector<int64_t> blockSize(3, 1);
  WalkResult r = op.getBody()->walk([&](scf::ParallelOp inner) {
    std::optional<SmallVector<gpu::Processor>> ip = getProcessors(inner);
    if (!ip || !llvm::all_of(*ip, isThreadProcessor)) {
      inner.emitOpError() << "inside a cooperative loop, only thread-level "
                             "mapped loops are supported";
      return WalkResult::interrupt();
    }
    for (auto [ub, proc] : llvm::zip(inner.getUpperBound(), *ip)) {
      std::optional<int64_t> n = getConstantIntValue(ub);
      if (!n) {
        inner.emitOpError()
            << "thread-level loop of a cooperative loop needs a constant "
               "extent (the block size)";
        return WalkResult::interrupt();
      }
      blockSize[dimOf(proc)] = std::max(blockSize[dimOf(proc)], *n);
    }
    return WalkResult::skip();
  });
  if (r.wasInterrupted())
    return failure();
  if (blockSize[0] * blockSize[1] * blockSize[2] > 1024)
    return op.emitOpError() << "a cooperative loop needs more than 1024 "
                               "threads per block";
  return blockSize;
}

/// Static shared memory a block may use without opting in (sm_70 to sm_90).
static constexpr int64_t kStaticSharedBytes = 48 * 1024;

static int64_t getStaticBytes(memref::AllocOp alloc) {
  MemRefType t = alloc.getType();
  if (!t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return kStaticSharedBytes + 1;
  return t.getNumElements() *
         llvm::divideCeil(t.getElementType().getIntOrFloatBitWidth(), 8);
}

/// The block-scope buffers of `op`: allocated in its body, or allocated
/// outside (buffer hoisting moves them out of loops) and used by this loop
/// only, apart from their deallocation (those are also in `hoisted`).
///
/// A buffer allocated outside and used by this loop only may also be one
/// that the loop indexes by its rows (a row group's values between its
/// members, one entry per row of the whole kernel): each block reads and
/// writes only its own rows' entries, so it is correct in workgroup memory
/// (one copy per block) and in global memory alike. It goes to workgroup
/// memory while the block's shared memory has room, else it stays a global
/// buffer (a GPT-2 attention's [B, H, T] row values are 384 KiB). The
/// buffers the mapping allocates per block (row kernels' lane partials,
/// contraction tiles) are sized for one block, well under the limit.
static FailureOr<SmallVector<memref::AllocOp>>
getBlockScopeBuffers(scf::ParallelOp op,
                     SmallVectorImpl<memref::AllocOp> &hoisted) {
  SmallVector<memref::AllocOp> allocs;
  int64_t bytes = 0;
  for (Operation &inner : op.getBody()->without_terminator())
    if (auto alloc = dyn_cast<memref::AllocOp>(inner)) {
      allocs.push_back(alloc);
      bytes += getStaticBytes(alloc);
    }
  if (bytes > kStaticSharedBytes)
    return op.emitOpError()
           << "the block-scope buffers of a cooperative loop need " << bytes
           << " bytes of shared memory, more than the " << kStaticSharedBytes
           << " a block has";
  llvm::SetVector<Value> usedFromOutside;
  op.getBody()->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (auto alloc = v.getDefiningOp<memref::AllocOp>())
        if (!op->isAncestor(alloc))
          usedFromOutside.insert(v);
  });
  for (Value v : usedFromOutside) {
    auto alloc = v.getDefiningOp<memref::AllocOp>();
    bool onlyHere = llvm::all_of(alloc->getUsers(), [&](Operation *user) {
      return op->isAncestor(user) || isa<memref::DeallocOp>(user);
    });
    if (onlyHere && bytes + getStaticBytes(alloc) <= kStaticSharedBytes) {
      bytes += getStaticBytes(alloc);
      allocs.push_back(alloc);
      hoisted.push_back(alloc);
    }
  }
  return allocs;
}

/// Makes each buffer of `allocs` a workgroup attribution of `launch`; the
/// map from each buffer to its attribution.
static FailureOr<DenseMap<Value, Value>>
attributeWorkgroupMemory(gpu::LaunchOp launch,
                         ArrayRef<memref::AllocOp> allocs) {
  DenseMap<Value, Value> workgroup;
  auto wgSpace = gpu::AddressSpaceAttr::get(launch.getContext(),
                                            gpu::AddressSpace::Workgroup);
  for (memref::AllocOp alloc : allocs) {
    MemRefType t = alloc.getType();
    if (!t.hasStaticShape() || !t.getLayout().isIdentity())
      return alloc.emitOpError() << "block-scope buffer of a cooperative loop "
                                    "needs a static shape";
    for (OpOperand &use : alloc->getUses())
      if (!isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp>(
              use.getOwner()))
        return use.getOwner()->emitOpError()
               << "uses a block-scope buffer of a cooperative loop; only "
                  "loads and stores are supported";
    auto wgType = MemRefType::get(t.getShape(), t.getElementType(),
                                  MemRefLayoutAttrInterface(), wgSpace);
    workgroup[alloc.getResult()] =
        launch.addWorkgroupAttribution(wgType, alloc.getLoc());
  }
  return workgroup;
}

/// Removes what the launch's body no longer needs at its end: deallocations
/// of workgroup memory (it lives as long as the block; the deallocation
/// pipeline may have put one, possibly under an scf.if), the empty
/// conditionals they leave, and a barrier after the last thread-level loop.
static void cleanUpLaunchTail(gpu::LaunchOp launch) {
  launch.walk([&](memref::DeallocOp dealloc) {
    if (llvm::is_contained(launch.getWorkgroupAttributions(),
                           dealloc.getMemref()))
      dealloc.erase();
  });
  Block &body = launch.getBody().front();
  Operation *tail = body.getTerminator()->getPrevNode();
  while (auto ifOp = dyn_cast_or_null<scf::IfOp>(tail)) {
    if (ifOp.getNumResults() != 0 ||
        !ifOp.thenBlock()->without_terminator().empty() ||
        (ifOp.elseBlock() && !ifOp.elseBlock()->without_terminator().empty()))
      break;
    tail = tail->getPrevNode();
    ifOp.erase();
  }
  if (isa_and_nonnull<gpu::BarrierOp>(tail))
    tail->erase();
}

LogicalResult CooperativeLoopsToGPUPass::convert(scf::ParallelOp op) {
  std::optional<SmallVector<gpu::Processor>> procs = getProcessors(op);
  if (!procs || !llvm::all_of(*procs, isBlockProcessor))
    return op.emitOpError() << "a cooperative loop must be mapped to blocks "
                               "only";
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> grid(3, one);
  for (auto [lb, ub, step, proc] : llvm::zip(
           op.getLowerBound(), op.getUpperBound(), op.getStep(), *procs)) {
    if (!isZero(lb) || !isOne(step))
      return op.emitOpError()
             << "a cooperative loop must start at 0 with step 1";
    grid[dimOf(proc)] = ub;
  }
  FailureOr<SmallVector<int64_t>> blockSize = getBlockSize(op);
  if (failed(blockSize))
    return failure();
  // Block-scope buffers become workgroup memory (chosen before the launch
  // is built: a refusal leaves no half-built launch).
  SmallVector<memref::AllocOp> hoisted;
  FailureOr<SmallVector<memref::AllocOp>> blockScope =
      getBlockScopeBuffers(op, hoisted);
  if (failed(blockScope))
    return failure();
  SmallVector<Value> blockValues;
  for (int64_t s : *blockSize)
    blockValues.push_back(arith::ConstantIndexOp::create(b, loc, s));
  auto launch =
      gpu::LaunchOp::create(b, loc, grid[0], grid[1], grid[2], blockValues[0],
                            blockValues[1], blockValues[2]);
  FailureOr<DenseMap<Value, Value>> workgroup =
      attributeWorkgroupMemory(launch, *blockScope);
  if (failed(workgroup))
    return failure();

  Block &body = launch.getBody().front();
  OpBuilder lb = OpBuilder::atBlockBegin(&body);
  IRMapping map;
  for (auto [buffer, wg] : *workgroup)
    map.map(buffer, wg);
  for (auto [iv, proc] : llvm::zip(op.getInductionVars(), *procs)) {
    gpu::KernelDim3 ids = launch.getBlockIds();
    map.map(iv, dimOf(proc) == 0 ? ids.x : dimOf(proc) == 1 ? ids.y : ids.z);
  }
  if (failed(cloneBlockLevel(*op.getBody(), lb, map, launch, *blockSize,
                             *workgroup)))
    return failure();
  gpu::TerminatorOp::create(lb, loc);
  cleanUpLaunchTail(launch);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("ga.") &&
        attr.getName() != GADialect::getCooperativeAttrName())
      launch->setAttr(attr.getName(), attr.getValue());
  op.erase();
  // Hoisted block-scope buffers are now unused but for their deallocation.
  for (memref::AllocOp alloc : hoisted) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      user->erase();
    alloc.erase();
  }
  ++numConverted;
  return success();
}

void CooperativeLoopsToGPUPass::runOnOperation() {
  SmallVector<scf::ParallelOp> loops;
  getOperation()->walk([&](scf::ParallelOp op) {
    if (op->hasAttr(GADialect::getCooperativeAttrName()))
      loops.push_back(op);
  });
  for (scf::ParallelOp op : loops)
    if (failed(convert(op)))
      return signalPassFailure();
}
