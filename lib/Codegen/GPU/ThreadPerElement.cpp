//===- ThreadPerElement.cpp - one GPU thread per output element -----------===//
//
// The general strategy of --ga-linalg-to-gpu-loops: a linalg op on buffers
// becomes one kernel-shaped loop with one thread per element of its outputs.
//
// * The parallel dimensions are linearized, the one that indexes the
//   innermost (contiguous) dimension of the first output fastest, so that
//   consecutive threads of a warp store to consecutive addresses.
// * The reduction dimensions become an `scf.for` nest inside the thread whose
//   iter_args carry the running value in registers: the output (for a
//   gradient accumulator, the buffer carried across micro-batches) is read
//   once before the loop and written once after it. Executed sequentially,
//   that is the reduction order of the linalg-to-loops lowering.
// * An output that a folded fill initializes starts from the fill value.
//
// A `memref.copy` is one thread per element too.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

/// A zero (or null pointer-like) value of a scalar type, as the initial
/// value of an output the payload does not read.
static Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

void mlir::ga::gpu_loops::computeElement(OpBuilder &nb, Location nloc,
                                         linalg::LinalgOp op,
                                         ArrayRef<Value> ivs,
                                         ArrayRef<Value> loopSizes,
                                         ArrayRef<linalg::LinalgOp> folded) {
  SmallVector<unsigned> reductionDims;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      reductionDims.push_back(d);
  Block *payload = op.getBlock();
  // Inputs that only depend on parallel dimensions are loaded once,
  // outside the reduction loop.
  SmallVector<Value> args(payload->getNumArguments());
  SmallVector<OpOperand *> deferred;
  for (OpOperand *in : op.getDpsInputOperands()) {
    unsigned argNo = in->getOperandNumber();
    if (!isa<MemRefType>(in->get().getType())) {
      args[argNo] = in->get();
      continue;
    }
    if (!op.payloadUsesValueFromOperand(in))
      continue;
    AffineMap map = op.getMatchingIndexingMap(in);
    bool usesReduction = llvm::any_of(
        reductionDims, [&](unsigned d) { return map.isFunctionOfDim(d); });
    if (usesReduction)
      deferred.push_back(in);
    else
      args[argNo] = loadOperand(nb, nloc, in->get(), map, ivs);
  }
  // Outputs: the current value (read once), carried in registers.
  SmallVector<Value> outInit;
  for (OpOperand &out : op.getDpsInitsMutable()) {
    Type elt = getElementTypeOrSelf(out.get().getType());
    linalg::LinalgOp fill = folded[outInit.size()];
    if (fill && op.payloadUsesValueFromOperand(&out)) {
      outInit.push_back(fillValue(nb, fill, ivs));
    } else if (op.payloadUsesValueFromOperand(&out)) {
      outInit.push_back(loadOperand(nb, nloc, out.get(),
                                    op.getMatchingIndexingMap(&out), ivs));
    } else {
      // Not read by the payload: any value (an iter_arg needs one).
      outInit.push_back(reductionDims.empty() ? Value()
                                              : zeroOf(nb, nloc, elt));
    }
  }
  unsigned numInputs = op.getNumDpsInputs();
  auto computeAt = [&](OpBuilder &ib, Location il, ArrayRef<Value> allIvs,
                       ValueRange current) -> SmallVector<Value> {
    SmallVector<Value> bound(args);
    for (OpOperand *in : deferred)
      bound[in->getOperandNumber()] =
          loadOperand(ib, il, in->get(), op.getMatchingIndexingMap(in), allIvs);
    for (auto [k, v] : llvm::enumerate(current))
      bound[numInputs + k] = v;
    return clonePayload(ib, op, bound, allIvs);
  };

  SmallVector<Value> results;
  if (reductionDims.empty()) {
    results = computeAt(nb, nloc, ivs, outInit);
  } else {
    Value zero = constIndex(nb, nloc, 0), one = constIndex(nb, nloc, 1);
    SmallVector<Value> lbs(reductionDims.size(), zero), ubs,
        steps(reductionDims.size(), one);
    for (unsigned d : reductionDims)
      ubs.push_back(loopSizes[d]);
    scf::LoopNest nest =
        scf::buildLoopNest(nb, nloc, lbs, ubs, steps, outInit,
                           [&](OpBuilder &ib, Location il, ValueRange rivs,
                               ValueRange iter) -> scf::ValueVector {
                             SmallVector<Value> allIvs(ivs);
                             for (auto [k, d] : llvm::enumerate(reductionDims))
                               allIvs[d] = rivs[k];
                             SmallVector<Value> r =
                                 computeAt(ib, il, allIvs, iter);
                             return scf::ValueVector(r.begin(), r.end());
                           });
    results.assign(nest.results.begin(), nest.results.end());
  }
  for (auto [out, v] : llvm::zip(op.getDpsInitsMutable(), results)) {
    SmallVector<Value> idx =
        indicesFor(nb, nloc, op.getMatchingIndexingMap(&out), ivs);
    memref::StoreOp::create(nb, nloc, v, out.get(), idx);
  }
}

SmallVector<unsigned> mlir::ga::gpu_loops::threadOrder(linalg::LinalgOp op) {
  SmallVector<unsigned> parallelDims;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::parallel)
      parallelDims.push_back(d);
  // The parallel dimension that indexes the contiguous dimension of the first
  // output becomes the fastest one: consecutive threads, consecutive stores.
  std::optional<unsigned> fastest;
  if (op.getNumDpsInits() > 0) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (outMap.getNumResults() > 0)
      if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
        if (llvm::is_contained(parallelDims, dim.getPosition()))
          fastest = dim.getPosition();
  }
  SmallVector<unsigned> order;
  for (unsigned d : parallelDims)
    if (!fastest || d != *fastest)
      order.push_back(d);
  if (fastest)
    order.push_back(*fastest);
  return order;
}

LogicalResult FunctionLowering::lowerPerElement(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return op->emitOpError()
           << "expected buffer semantics (run one-shot-bufferize before "
              "ga-linalg-to-gpu-loops)";
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<Value> loopSizes;
  for (Range r : ranges) {
    // createLoopRanges gives offset 0 and stride 1 for every dimension.
    loopSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  }
  SmallVector<unsigned> parallelDims, reductionDims;
  for (auto [d, it] : llvm::enumerate(iterators))
    (it == utils::IteratorType::parallel ? parallelDims : reductionDims)
        .push_back(d);

  SmallVector<unsigned> order = threadOrder(op);
  SmallVector<Value> orderedSizes;
  for (unsigned d : order)
    orderedSizes.push_back(loopSizes[d]);

  // Fills of an output that the op overwrites: start from the fill value.
  SmallVector<linalg::LinalgOp> folded = getFoldedFills(op);

  unsigned numLoops = op.getNumLoops();
  Value zero = constIndex(b, loc, 0);
  auto par = buildKernel(b, loc, orderedSizes,
                         [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
                           SmallVector<Value> ivs(numLoops, zero);
                           for (auto [k, d] : llvm::enumerate(order))
                             ivs[d] = pivs[k];
                           computeElement(nb, nloc, op, ivs, loopSizes, folded);
                         });
  annotateKernel(par, op, describeKernel(op));
  replaced(op, folded, /*kernels=*/1);
  return success();
}

LogicalResult FunctionLowering::lowerCopy(memref::CopyOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<MemRefType>(op.getSource().getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d)
    sizes.push_back(getValueOrCreateConstantIndexOp(
        b, loc, memref::getMixedSize(b, loc, op.getSource(), d)));
  Value src = op.getSource(), dst = op.getTarget();
  auto par = buildKernel(b, loc, sizes,
                         [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
                           Value v = memref::LoadOp::create(nb, nloc, src, ivs);
                           memref::StoreOp::create(nb, nloc, v, dst, ivs);
                         });
  annotateKernel(par, op, "copy");
  op->erase();
  ++counts.kernels;
  return success();
}
