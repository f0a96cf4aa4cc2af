//===- LinalgToGPULoops.cpp - linalg on buffers to mapped parallel loops --===//
//
// Lowers every linalg op (and memref.copy) on buffers to one `scf.parallel`
// over (blocks, threads) carrying a GPU mapping, so that
// `--convert-parallel-loops-to-gpu` turns each of them into one kernel:
//
// * the parallel dimensions of the op are linearized, the one that indexes
//   the innermost (contiguous) dimension of the first output fastest, so that
//   consecutive threads of a warp store to consecutive addresses;
// * each thread computes one output element; the reduction dimensions become
//   an `scf.for` nest inside the thread whose iter_args carry the running
//   value in registers: the output (for a gradient accumulator: the buffer
//   carried across micro-batches) is read once before the loop and written
//   once after it;
// * loads of device memory left on the host (a `tensor.extract` of a 0-d
//   result, say, feeding scalar math) are rematerialized inside the kernels
//   that use them, so that host code only computes sizes and launches.
//
// Executed sequentially (ga-lower-to-cpu), the output computes exactly what
// the linalg ops computed: every thread runs the same payload in the same
// reduction order as the linalg-to-loops lowering.
//
// This file is the driver: which fills fold into the op after them, which
// strategy lowers each op (GPULoops.h lists them, one file each), and the
// check that no host access of device memory is left.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_LINALGTOGPULOOPS
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

//===----------------------------------------------------------------------===//
// Assertions in kernels
//===----------------------------------------------------------------------===//

/// Rewrites every `cf.assert %ok, msg` inside a mapped loop (frontends check
/// gathered indices this way) into `scf.if (not %ok) { cf.assert false, msg }`:
/// the same check, and the branch the kernel takes anyway (the failing thread
/// alone calls __assertfail), but `--convert-parallel-loops-to-gpu` (MLIR 22)
/// leaves a loop with an assertion at the top of its body unconverted, and the
/// lowering then stops at the host accesses of that loop.
static void guardAssertions(func::FuncOp func) {
  SmallVector<cf::AssertOp> asserts;
  func.walk([&](cf::AssertOp op) {
    if (isInsideMappedLoop(op))
      asserts.push_back(op);
  });
  for (cf::AssertOp op : asserts) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value ok = op.getArg();
    Value isTrue = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    Value failed = arith::XOrIOp::create(b, loc, ok, isTrue);
    auto branch = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
    b.setInsertionPointToStart(branch.thenBlock());
    Value isFalse = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    cf::AssertOp::create(b, loc, isFalse, op.getMsg());
    op.erase();
  }
}

//===----------------------------------------------------------------------===//
// Folded fills
//===----------------------------------------------------------------------===//

/// A fill (see isFillLike) of exactly the buffer `init` of `op` that nothing
/// reads
/// before `op` overwrites every element of it: `op` can start from the fill
/// value instead of reading it back (one kernel and one pass over the buffer
/// fewer). Null if there is none.
static linalg::LinalgOp findFoldableFill(linalg::LinalgOp op, OpOperand &init) {
  AffineMap map = op.getMatchingIndexingMap(&init);
  auto type = dyn_cast<MemRefType>(init.get().getType());
  if (!type || !map.isProjectedPermutation() ||
      map.getNumResults() != static_cast<unsigned>(type.getRank()))
    return {};
  Value root = getViewRoot(init.get());
  // The op must not read the buffer through one of its inputs.
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType()) && getViewRoot(in->get()) == root)
      return {};
  // Reshapes (expand/collapse_shape) view the whole buffer: a fill of the
  // buffer is a fill of any reshape of it.
  auto stripReshapes = [](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
        break;
      v = def->getOperand(0);
    }
    return v;
  };
  Value target = stripReshapes(init.get());
  for (Operation *it = op->getPrevNode(); it; it = it->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::LinalgOp>(it))
      if (fill.hasPureBufferSemantics() && isFillLike(fill) &&
          stripReshapes(fill.getDpsInits()[0]) == target)
        return fill;
    if (mayAccessBuffer(it, root, /*writesOnly=*/false))
      return {};
  }
  return {};
}

SmallVector<linalg::LinalgOp>
FunctionLowering::getFoldedFills(linalg::LinalgOp op) const {
  SmallVector<linalg::LinalgOp> fills = foldedFills.lookup(op);
  fills.resize(op.getNumDpsInits());
  return fills;
}

void FunctionLowering::replaced(linalg::LinalgOp op,
                                ArrayRef<linalg::LinalgOp> fills,
                                unsigned kernels) {
  op->erase();
  for (linalg::LinalgOp fill : fills)
    if (fill) {
      fill->erase();
      ++counts.foldedFills;
    }
  counts.kernels += kernels;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// True if `copy` writes every element onto itself: its source and target
/// are the same view, or subviews of one buffer with the same offsets, sizes
/// and strides (bucketing writes gradients into the bucket and then copies
/// the bucket's slice onto an equal slice). Such a copy is a no-op.
static bool isSelfCopy(memref::CopyOp copy) {
  Value source = copy.getSource(), target = copy.getTarget();
  if (source == target)
    return true;
  auto a = source.getDefiningOp<memref::SubViewOp>();
  auto b = target.getDefiningOp<memref::SubViewOp>();
  return a && b &&
         OperationEquivalence::isEquivalentTo(
             a, b, OperationEquivalence::exactValueMatch,
             /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// True if every use of `value` (through views) is `writer` itself, a view
/// whose uses are such, or a deallocation.
static bool onlyWrittenBy(Value value, Operation *writer) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user == writer || isa<memref::DeallocOp>(user))
      continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != value)
      return false;
    for (Value result : user->getResults())
      if (!onlyWrittenBy(result, writer))
        return false;
  }
  return true;
}

/// True if `op` writes only buffers that nothing ever reads: each output is
/// (a view of) an allocation of this function whose only other uses are
/// deallocations, and the payload has no other effect. Bufferization leaves
/// such writes behind (the fill of an init that a later op no longer
/// reads); their kernel would compute nothing anyone sees.
static bool isDeadWrite(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      op->getNumResults() != 0)
    return false;
  for (Operation &nested : op.getBlock()->without_terminator())
    if (!isMemoryEffectFree(&nested))
      return false;
  return llvm::all_of(op.getDpsInits(), [&](Value init) {
    Value root = getViewRoot(init);
    return root.getDefiningOp<memref::AllocOp>() && onlyWrittenBy(root, op);
  });
}

static void allowContraction(scf::ParallelOp kernel) {
  kernel.walk([](arith::ArithFastMathInterface op) {
    Operation *raw = op.getOperation();
    StringRef name = op.getFastMathAttrName();
    arith::FastMathFlags flags = arith::FastMathFlags::none;
    if (auto attr = raw->getAttrOfType<arith::FastMathFlagsAttr>(name))
      flags = attr.getValue();
    raw->setAttr(
        name, arith::FastMathFlagsAttr::get(
                  raw->getContext(), flags | arith::FastMathFlags::contract));
  });
}

/// Records which fill each op of `work` absorbs (see findFoldableFill) in
/// `lowering`, before anything is lowered: a fill comes before the op that
/// absorbs it. Returns the absorbed fills.
static llvm::SmallPtrSet<Operation *, 16>
planFoldedFills(ArrayRef<Operation *> work, FunctionLowering &lowering) {
  llvm::SmallPtrSet<Operation *, 16> absorbed;
  for (Operation *op : work)
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        linalgOp && !isFillLike(linalgOp)) {
      SmallVector<linalg::LinalgOp> fills;
      for (OpOperand &out : linalgOp.getDpsInitsMutable()) {
        linalg::LinalgOp fill = findFoldableFill(linalgOp, out);
        if (fill && !absorbed.insert(fill).second)
          fill = {};
        fills.push_back(fill);
      }
      lowering.setFoldedFills(op, std::move(fills));
    }
  return absorbed;
}

/// Lowers `op` by the first strategy that takes it; `following` are the ops
/// still to lower after it. Returns the ops after `op` that its kernel took
/// (erased; compared, never dereferenced).
static FailureOr<SmallVector<Operation *>>
lowerOne(Operation *op, ArrayRef<Operation *> following,
         const llvm::SmallPtrSetImpl<Operation *> &absorbed,
         FunctionLowering &lowering, const LoweringOptions &options) {
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    SmallVector<Operation *> fused =
        lowering.lowerFusedSiblings(op, following, absorbed);
    if (fused.empty() && failed(lowering.lowerCopy(copy)))
      return failure();
    return fused;
  }
  auto linalgOp = cast<linalg::LinalgOp>(op);
  // A reduction over long rows, with enough of them, is a row kernel with a
  // warp or a block per row, never split.
  if (succeeded(lowering.lowerTiledContraction(linalgOp)) ||
      (lowering.rowLanes(linalgOp) == 0 &&
       succeeded(lowering.lowerSplitReduction(linalgOp,
                                              options.splitRowReductionMin))))
    return SmallVector<Operation *>();
  // A row reduction takes the ops after it that it fuses. One that fuses
  // nothing is split from a lower length on: a thread per output looping
  // over a long reduction is a serial chain of dependent loads (~0.15 us
  // each), where the split costs one more launch.
  SmallVector<Operation *> fused =
      lowering.lowerFusedRows(linalgOp, following, absorbed);
  if (!fused.empty() || succeeded(lowering.lowerSplitReduction(
                            linalgOp, options.splitReductionMin)))
    return fused;
  // Independent element-wise ops of the same thread space: one kernel.
  fused = lowering.lowerFusedSiblings(op, following, absorbed);
  if (fused.empty() && failed(lowering.lowerPerElement(linalgOp)))
    return failure();
  return fused;
}

/// Whatever else touches device memory on the host is an error: the GPU
/// lowering could not run it.
static LogicalResult checkNoHostAccessOfDeviceMemory(func::FuncOp func) {
  WalkResult r = func.walk([&](Operation *op) {
    if (!isa<memref::LoadOp, memref::StoreOp>(op) || isInsideMappedLoop(op))
      return WalkResult::advance();
    Value mem = isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemref()
                                        : cast<memref::StoreOp>(op).getMemref();
    if (isHostMemory(mem))
      return WalkResult::advance();
    op->emitOpError() << "accesses device memory on the host after "
                         "ga-linalg-to-gpu-loops";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

namespace {
struct LinalgToGPULoopsPass
    : public ga::impl::LinalgToGPULoopsBase<LinalgToGPULoopsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The linalg ops and copies to lower, in order; erases on the way the
  /// copies that change nothing and the writes nobody reads (no kernel for
  /// either).
  SmallVector<Operation *> collectWork(func::FuncOp func);
  /// Adds the lowering's counts to the pass statistics.
  void record(const LoweringCounts &counts);
};
} // namespace

SmallVector<Operation *> LinalgToGPULoopsPass::collectWork(func::FuncOp func) {
  SmallVector<Operation *> work;
  SmallVector<memref::CopyOp> selfCopies;
  func.walk([&](Operation *op) {
    if (isInsideMappedLoop(op))
      return;
    if (auto copy = dyn_cast<memref::CopyOp>(op); copy && isSelfCopy(copy))
      selfCopies.push_back(copy);
    else if (isa<linalg::LinalgOp, memref::CopyOp>(op))
      work.push_back(op);
  });
  for (memref::CopyOp copy : selfCopies)
    copy.erase();
  numSelfCopies += selfCopies.size();
  llvm::erase_if(work, [&](Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !isDeadWrite(linalgOp))
      return false;
    op->erase();
    ++numDeadWrites;
    return true;
  });
  return work;
}

void LinalgToGPULoopsPass::record(const LoweringCounts &counts) {
  numKernels += counts.kernels;
  numSunk += counts.sunk;
  numReadBacks += counts.readBacks;
  numSnapshots += counts.snapshots;
  numSplit += counts.split;
  numTiled += counts.tiled;
  numFoldedFills += counts.foldedFills;
  numRowFused += counts.rowFused;
  numSiblingFused += counts.siblingFused;
}

void LinalgToGPULoopsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
    func.emitError() << "block-size must be a multiple of 32 in [32, 1024], "
                        "got "
                     << static_cast<unsigned>(blockSize);
    return signalPassFailure();
  }
  SmallVector<Operation *> work = collectWork(func);
  LoweringOptions options;
  options.blockSize = blockSize;
  options.gemmTile = gemmTile;
  options.gemmMinReduction = gemmMinReduction;
  options.splitReductionMin = splitReductionMin;
  options.splitRowReductionMin = splitRowReductionMin;
  options.fuseRows = fuseRows;
  options.fuseRowsMaxThreads = fuseRowsMaxThreads;
  options.rowWarpMin = rowWarpMin;
  options.rowBlockMin = rowBlockMin;
  options.rowMinRows = rowMinRows;
  options.fuseSiblings = fuseSiblings;
  options.fuseSiblingsMaxThreads = fuseSiblingsMaxThreads;
  LoweringCounts counts;
  FunctionLowering lowering(options, counts);
  llvm::SmallPtrSet<Operation *, 16> absorbed = planFoldedFills(work, lowering);
  // The ops still to lower, in order (absorbed fills go with their op).
  SmallVector<Operation *> pending;
  for (Operation *op : work)
    if (!absorbed.contains(op))
      pending.push_back(op);
  llvm::SmallPtrSet<Operation *, 16> fusedAway;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (fusedAway.contains(pending[i]))
      continue;
    FailureOr<SmallVector<Operation *>> fused =
        lowerOne(pending[i], ArrayRef(pending).drop_front(i + 1), absorbed,
                 lowering, options);
    if (failed(fused))
      return signalPassFailure();
    fusedAway.insert(fused->begin(), fused->end());
  }
  lowering.wrapHostStores(func);
  guardAssertions(func);
  LogicalResult sunk = lowering.sinkHostLoads(func);
  record(counts);
  if (failed(sunk))
    return signalPassFailure();
  if (fma)
    func.walk([](scf::ParallelOp op) {
      if (op->hasAttr(GADialect::getKernelAttrName()))
        allowContraction(op);
    });
  // No canonicalization may run on mapped loops (it would fold single-block
  // loops and drop their mapping): erase the index arithmetic and constants
  // that the lowering created but did not use.
  for (Block &block : func.getBody())
    eraseDeadOps(block);
  if (failed(checkNoHostAccessOfDeviceMemory(func)))
    signalPassFailure();
}
