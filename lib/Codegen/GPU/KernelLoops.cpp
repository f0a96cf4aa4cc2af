//===- KernelLoops.cpp - mapped loops of ga-linalg-to-gpu-loops -----------===//
//
// The pieces every strategy of --ga-linalg-to-gpu-loops builds kernels from:
// a loop over blocks and threads for an iteration space, loads and payloads of
// linalg ops at given loop indices, kernel names.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

bool gpu_loops::isInsideMappedLoop(Operation *op) {
  return static_cast<bool>(getOutermostMappedLoop(op));
}

scf::ParallelOp gpu_loops::getOutermostMappedLoop(Operation *op) {
  scf::ParallelOp result;
  for (Operation *p = op; p; p = p->getParentOp())
    if (auto par = dyn_cast<scf::ParallelOp>(p))
      if (par->hasAttr(gpu::getMappingAttrName()))
        result = par;
  return result;
}

Value gpu_loops::constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

void gpu_loops::setProcessors(scf::ParallelOp loop,
                              ArrayRef<gpu::Processor> processors) {
  MLIRContext *ctx = loop.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (gpu::Processor p : processors)
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(ctx, p, id, id));
  (void)gpu::setMappingAttr(loop, mapping);
}

scf::ParallelOp gpu_loops::buildKernelLoop(
    OpBuilder &b, Location loc, unsigned maxBlockSize, ArrayRef<Value> sizes,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  // Total number of threads that do work, statically if possible.
  std::optional<int64_t> staticTotal = 1;
  for (Value s : sizes) {
    std::optional<int64_t> c = getConstantIntValue(s);
    if (c && staticTotal)
      *staticTotal *= *c;
    else
      staticTotal.reset();
  }
  Value total;
  if (staticTotal) {
    total = constIndex(b, loc, *staticTotal);
  } else {
    total = sizes.front();
    for (Value s : sizes.drop_front())
      total = arith::MulIOp::create(b, loc, total, s);
  }
  int64_t blockSize = maxBlockSize;
  if (staticTotal)
    blockSize = std::min<int64_t>(
        maxBlockSize, std::max<int64_t>(32, llvm::alignTo(*staticTotal, 32)));
  Value block = constIndex(b, loc, blockSize);
  Value grid;
  bool guarded = true;
  if (staticTotal) {
    grid = constIndex(b, loc, llvm::divideCeil(*staticTotal, blockSize));
    guarded = *staticTotal % blockSize != 0;
  } else {
    grid = arith::CeilDivUIOp::create(b, loc, total, block);
  }
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  auto par = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero}, ValueRange{grid, block},
      ValueRange{one, one}, [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value lin = arith::AddIOp::create(
            nb, nloc, arith::MulIOp::create(nb, nloc, ivs[0], block), ivs[1]);
        auto emitBody = [&](OpBuilder &bb, Location bl) {
          SmallVector<Value> idx(sizes.size());
          Value rest = lin;
          for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0;
               --d) {
            if (d == 0) {
              idx[d] = rest;
              break;
            }
            idx[d] = arith::RemUIOp::create(bb, bl, rest, sizes[d]);
            rest = arith::DivUIOp::create(bb, bl, rest, sizes[d]);
          }
          body(bb, bl, idx);
        };
        if (guarded) {
          Value inBounds = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::ult, lin, total);
          scf::IfOp::create(nb, nloc, inBounds,
                            [&](OpBuilder &tb, Location tl) {
                              emitBody(tb, tl);
                              scf::YieldOp::create(tb, tl);
                            });
        } else {
          emitBody(nb, nloc);
        }
      });
  setProcessors(par, {gpu::Processor::BlockX, gpu::Processor::ThreadX});
  return par;
}

Value gpu_loops::loadOperand(OpBuilder &b, Location loc, Value memref,
                             AffineMap map, ArrayRef<Value> ivs) {
  return memref::LoadOp::create(b, loc, memref, indicesFor(b, loc, map, ivs));
}

SmallVector<Value> gpu_loops::indicesFor(OpBuilder &b, Location loc,
                                         AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<OpFoldResult> operands(ivs.begin(), ivs.end());
  SmallVector<Value> indices;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
    indices.push_back(getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, map.getSubMap({i}),
                                              operands)));
  return indices;
}

SmallVector<Value> gpu_loops::clonePayload(OpBuilder &b, linalg::LinalgOp op,
                                           ValueRange args,
                                           ArrayRef<Value> ivs) {
  Block *block = op.getBlock();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(block->getArguments(), args))
    if (v) // null for arguments the payload does not use
      map.map(arg, v);
  for (Operation &inner : block->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    Operation *clone = b.clone(inner, map);
    // linalg.index nested in regions of the payload (an scf.if, say).
    clone->walk([&](linalg::IndexOp nested) {
      nested.getResult().replaceAllUsesWith(ivs[nested.getDim()]);
      nested.erase();
    });
  }
  SmallVector<Value> results;
  for (Value v : block->getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(v));
  return results;
}

Value gpu_loops::fillValue(OpBuilder &b, linalg::LinalgOp fill,
                           ArrayRef<Value> ivs) {
  SmallVector<Value> args;
  for (OpOperand *in : fill.getDpsInputOperands())
    args.push_back(in->get());
  args.push_back(Value()); // the output, which a fill does not read
  return clonePayload(b, fill, args, ivs)[0];
}

void gpu_loops::annotateKernel(scf::ParallelOp loop, Operation *from,
                               StringRef kind) {
  StringRef kernelAttr = GADialect::getKernelAttrName();
  loop->setAttr(kernelAttr, StringAttr::get(loop.getContext(), kind));
  for (NamedAttribute attr : from->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("ga.") &&
        attr.getName() != kernelAttr)
      loop->setAttr(attr.getName(), attr.getValue());
}

std::string gpu_loops::describeKernel(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op))
    return op->getName().stripDialect().str();
  bool hasTensorInput =
      llvm::any_of(op.getDpsInputOperands(), [](OpOperand *in) {
        return isa<ShapedType>(in->get().getType());
      });
  if (!hasTensorInput)
    return "fill";
  if (op.getNumReductionLoops() == 0)
    return "elementwise";
  // A matrix product: a multiply-add contraction with an M and an N
  // dimension (GEMM-shaped). One without (a matrix-vector product such as
  // LayerNorm's row dot with its gain, a dot product, the gain gradient
  // summed over tokens) is a reduction.
  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (succeeded(dims) && !dims->m.empty() && !dims->n.empty())
      return "matmul";
  }
  return "reduce";
}

/// True if the address of the allocation `root` may reach code that does
/// not say which memory it accesses: some use (through views) is other than
/// a linalg op, a copy, a load or store of an element, a view or a
/// deallocation (a pointer extraction for a library call, a call, a return,
/// a cast).
static bool mayEscape(Value root) {
  if (!root.getDefiningOp<memref::AllocOp>())
    return true;
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      if (isa<linalg::LinalgOp, memref::CopyOp, memref::DeallocOp>(user))
        continue;
      if (auto load = dyn_cast<memref::LoadOp>(user);
          load && load.getMemRef() == v)
        continue;
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && store.getMemRef() == v)
        continue;
      return true;
    }
  }
  return false;
}

bool gpu_loops::mayAccessBuffer(Operation *op, Value root, bool writesOnly) {
  // An op that does not declare its effects (a call) reaches an allocation
  // whose address never escapes only through its operands.
  std::optional<bool> escapes;
  auto opaqueMayAccess = [&](Operation *nested) {
    if (!escapes)
      escapes = mayEscape(root);
    return *escapes || llvm::any_of(nested->getOperands(), [&](Value v) {
      return getViewRoot(v) == root;
    });
  };
  WalkResult r = op->walk([&](Operation *nested) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!iface) {
      if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return WalkResult::advance();
      return isMemoryEffectFree(nested) || !opaqueMayAccess(nested)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (auto &e : effects) {
      if (isa<MemoryEffects::Allocate>(e.getEffect()) ||
          (writesOnly && isa<MemoryEffects::Read>(e.getEffect())))
        continue;
      Value v = e.getValue();
      if (!v || getViewRoot(v) == root)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

bool gpu_loops::commutesBefore(Operation *op, ArrayRef<Value> readRoots,
                               ArrayRef<Value> writtenRoots) {
  SmallVector<Value> reads, writes;
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    reads.push_back(copy.getSource());
    writes.push_back(copy.getTarget());
  } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
             linalgOp && linalgOp.hasPureBufferSemantics()) {
    llvm::append_range(reads, linalgOp.getDpsInputs());
    llvm::append_range(writes, linalgOp.getDpsInits());
    // Only its operands: a payload with effects of its own does not commute.
    for (Operation &nested : linalgOp.getBlock()->without_terminator())
      if (!isMemoryEffectFree(&nested))
        return false;
  } else {
    return false;
  }
  for (Value v : reads)
    if (isa<MemRefType>(v.getType()) &&
        llvm::is_contained(writtenRoots, getViewRoot(v)))
      return false;
  for (Value v : writes) {
    Value root = getViewRoot(v);
    if (llvm::is_contained(writtenRoots, root) ||
        llvm::is_contained(readRoots, root))
      return false;
  }
  return true;
}
