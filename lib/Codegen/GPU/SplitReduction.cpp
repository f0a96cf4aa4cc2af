//===- SplitReduction.cpp - long reductions as two kernels ----------------===//
//
// The split-reduction strategy of --ga-linalg-to-gpu-loops: a reduction that
// is long (at least split-reduction-min elements) into few outputs would
// leave most of the GPU idle with one thread per output. It becomes two
// kernels: the first reduces chunks of the reduction into partial results
// (one thread per chunk and output, starting from the combiner's neutral
// element), the second combines the partial results of each output into the
// output in chunk order, so that the accumulation into a micro-batch
// accumulator stays in that second kernel.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

LogicalResult FunctionLowering::lowerSplitReduction(linalg::LinalgOp op,
                                                    unsigned minLength) {
  if (minLength == 0 || !op.hasPureBufferSemantics() ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op.hasIndexSemantics())
    return failure();
  // The combiner: out' = combine(out, value).
  Block *payload = op.getBlock();
  SmallVector<Operation *> combiners;
  BlockArgument outArg = op.getRegionOutputArgs()[0];
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral || combiner->getNumOperands() != 2)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  SmallVector<int64_t> sizes;
  for (Range r : ranges) {
    std::optional<int64_t> c = getConstantIntValue(r.size);
    if (!c)
      return failure(); // static sizes only
    sizes.push_back(*c);
  }
  SmallVector<unsigned> parallelDims, reductionDims;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? parallelDims : reductionDims)
        .push_back(d);
  int64_t outputs = 1, length = 1;
  for (unsigned d : parallelDims)
    outputs *= sizes[d];
  for (unsigned d : reductionDims)
    length *= sizes[d];
  // Enough threads already, or too short to be worth a second kernel.
  const int64_t targetThreads = 16384;
  if (length < static_cast<int64_t>(minLength) || outputs * 2 > targetThreads)
    return failure();
  // At least 32 elements per chunk, at least two chunks.
  int64_t splits = std::max<int64_t>(
      2, std::min<int64_t>(llvm::divideCeil(targetThreads, outputs),
                           llvm::divideCeil(length, 32)));
  int64_t chunk = llvm::divideCeil(length, splits);
  splits = llvm::divideCeil(length, chunk);

  // The output's contiguous dimension fastest, as for other kernels.
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  SmallVector<unsigned> order;
  std::optional<unsigned> fastest;
  if (outMap.getNumResults() > 0)
    if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
      fastest = dim.getPosition();
  for (unsigned d : parallelDims)
    if (!fastest || d != *fastest)
      order.push_back(d);
  if (fastest)
    order.push_back(*fastest);

  Type elt = getElementTypeOrSelf(init->get().getType());
  auto partialType = MemRefType::get({splits, outputs}, elt);
  Value partial = memref::AllocOp::create(b, loc, partialType);
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value chunkV = constIndex(b, loc, chunk),
        lengthV = constIndex(b, loc, length);
  unsigned numLoops = op.getNumLoops();
  auto linearOutput = [&](OpBuilder &nb, Location nloc, ArrayRef<Value> ivs) {
    Value lin = zero;
    for (unsigned d : order)
      lin = arith::AddIOp::create(
          nb, nloc,
          arith::MulIOp::create(nb, nloc, lin, constIndex(nb, nloc, sizes[d])),
          ivs[d]);
    return lin;
  };

  // Kernel 1: partial[s][p] = the reduction over chunk s, from the neutral
  // element.
  SmallVector<Value> sizes1 = {constIndex(b, loc, splits)};
  for (unsigned d : order)
    sizes1.push_back(constIndex(b, loc, sizes[d]));
  auto part = buildKernel(
      b, loc, sizes1, [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(numLoops, zero);
        for (auto [k, d] : llvm::enumerate(order))
          ivs[d] = pivs[k + 1];
        Value lo = arith::MulIOp::create(nb, nloc, pivs[0], chunkV);
        Value hi = arith::MinUIOp::create(
            nb, nloc, arith::AddIOp::create(nb, nloc, lo, chunkV), lengthV);
        Value start = arith::ConstantOp::create(nb, nloc, *neutral);
        auto loop = scf::ForOp::create(
            nb, nloc, lo, hi, one, ValueRange{start},
            [&](OpBuilder &lb, Location ll, Value r, ValueRange iter) {
              SmallVector<Value> all(ivs);
              Value rest = r;
              for (int64_t k = reductionDims.size() - 1; k >= 0; --k) {
                unsigned d = reductionDims[k];
                if (k == 0) {
                  all[d] = rest;
                  break;
                }
                Value n = constIndex(lb, ll, sizes[d]);
                all[d] = arith::RemUIOp::create(lb, ll, rest, n);
                rest = arith::DivUIOp::create(lb, ll, rest, n);
              }
              SmallVector<Value> args(payload->getNumArguments());
              for (OpOperand *in : op.getDpsInputOperands()) {
                unsigned n = in->getOperandNumber();
                args[n] = isa<MemRefType>(in->get().getType())
                              ? loadOperand(lb, ll, in->get(),
                                            op.getMatchingIndexingMap(in), all)
                              : in->get();
              }
              args.back() = iter[0];
              SmallVector<Value> res = clonePayload(lb, op, args, all);
              scf::YieldOp::create(lb, ll, res);
            });
        memref::StoreOp::create(
            nb, nloc, loop.getResult(0), partial,
            ValueRange{pivs[0], linearOutput(nb, nloc, ivs)});
      });
  annotateKernel(part, op, "reduce_part");
  // The second kernel accumulates.
  part->removeAttr(GADialect::getAccumulatesAttrName());

  // Kernel 2: out = combine(out, partial[0][p], ..., partial[S-1][p]).
  SmallVector<linalg::LinalgOp> folded = getFoldedFills(op);
  linalg::LinalgOp fill = folded[0];
  SmallVector<Value> sizes2(sizes1.begin() + 1, sizes1.end());
  auto combine = buildKernel(
      b, loc, sizes2, [&](OpBuilder &nb, Location nloc, ValueRange pivs) {
        SmallVector<Value> ivs(numLoops, zero);
        for (auto [k, d] : llvm::enumerate(order))
          ivs[d] = pivs[k];
        Value acc;
        if (fill) {
          acc = fillValue(nb, fill, {});
        } else {
          acc = loadOperand(nb, nloc, init->get(), outMap, ivs);
        }
        Value p = linearOutput(nb, nloc, ivs);
        auto loop = scf::ForOp::create(
            nb, nloc, zero, constIndex(nb, nloc, splits), one, ValueRange{acc},
            [&](OpBuilder &lb, Location ll, Value sIdx, ValueRange iter) {
              Value v =
                  memref::LoadOp::create(lb, ll, partial, ValueRange{sIdx, p});
              IRMapping map;
              Value other = combiner->getOperand(0) == outArg
                                ? combiner->getOperand(1)
                                : combiner->getOperand(0);
              map.map(outArg, iter[0]);
              map.map(other, v);
              Operation *c = lb.clone(*combiner, map);
              scf::YieldOp::create(lb, ll, c->getResults());
            });
        memref::StoreOp::create(nb, nloc, loop.getResult(0), init->get(),
                                indicesFor(nb, nloc, outMap, ivs));
      });
  annotateKernel(combine, op, "reduce");
  replaced(op, folded, /*kernels=*/2);
  ++counts.split;
  return success();
}
