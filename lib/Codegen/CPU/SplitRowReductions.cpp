//===- SplitRowReductions.cpp - lane-wise partial row reductions ----------===//
//
// --ga-split-row-reductions: a linalg op on buffers that reduces along its
// innermost, contiguous dimension (the sums and maxima of a softmax, a
// LayerNorm, an RMSNorm or a cross-entropy, over each row) is computed row
// by row into a stack buffer of one vector's lanes, then the lanes are
// combined into the row's result. ga-vectorize-linalg vectorizes the
// lane-wise part: its innermost dimension is parallel.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::ga {
#define GEN_PASS_DEF_SPLITROWREDUCTIONS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// What a qualifying op is split with: the combiner of its payload (the op
/// that folds a row's value into the result) and that combiner's neutral
/// element, the lanes, and the element type of the result.
struct Plan {
  Operation *combiner;
  TypedAttr identity;
  int64_t lanes;
  Type elementType;
};

/// Whether buffers of `type` hold elements as a vector of it does (see
/// ga-vectorize-linalg).
static bool hasVectorLayout(Type type) {
  if (!type.isIntOrFloat())
    return false;
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits >= 8 && llvm::isPowerOf2_32(bits);
}

/// The plan for `op`, or nullopt if it does not qualify (see the pass
/// description).
static std::optional<Plan> planSplit(linalg::LinalgOp op,
                                     unsigned vectorWidth) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  unsigned inner = op.getNumLoops() - 1;
  if (op.getIteratorTypesArray()[inner] != utils::IteratorType::reduction)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    Type elem = getElementTypeOrSelf(operand.get().getType());
    if (!hasVectorLayout(elem))
      return std::nullopt;
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue; // a scalar, broadcast
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return std::nullopt;
    if (!map.isFunctionOfDim(inner)) {
      // Read whole by every lane: needs static strides (ga-vectorize-linalg).
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return std::nullopt;
      continue;
    }
    // Contiguous: the innermost loop indexes the last dimension. (Not
    // strided rows: products without BLAS have them in one operand, and
    // splitting them made the recomputed and the kept form of a product
    // round apart, recompute-products.test.)
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != inner || !type.isLastDimUnitStride())
      return std::nullopt;
  }
  // The lanes, and so the order of the sum, follow from the result's type
  // alone: not from the operands that element-wise fusion (or a recomputed
  // copy fused into this op) brought in, so that the same row is summed in
  // the same order whatever was fused into its reduction. Wider operands
  // (the i64 random bits of a dropout mask) take vectors of more than
  // `vectorWidth` bits, which LLVM splits.
  Type resultType = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  int64_t lanes = vectorWidth / resultType.getIntOrFloatBitWidth();
  // At least two vectors per row: a shorter row gains nothing.
  if (lanes < 2 || ranges[inner] < 2 * lanes)
    return std::nullopt;
  SmallVector<Operation *> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return std::nullopt;
  std::optional<TypedAttr> identity = arith::getNeutralElement(combiners[0]);
  if (!identity)
    return std::nullopt;
  return Plan{combiners[0], *identity, lanes, resultType};
}

/// Rewrites the `linalg.index` ops of `op`'s payload, whose loops were those
/// of a row tile (every loop but the innermost of one iteration), for the
/// loops `op` has now: an outer loop's index is 0, the innermost one's is
/// `innerIndex(builder)` (built before the index op).
static void
remapRowIndices(RewriterBase &b, Operation *op, unsigned inner,
                function_ref<Value(OpBuilder &, Location)> innerIndex) {
  SmallVector<linalg::IndexOp> indices;
  op->walk([&](linalg::IndexOp index) { indices.push_back(index); });
  for (linalg::IndexOp index : indices) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(index);
    Value value =
        index.getDim() == inner
            ? innerIndex(b, index.getLoc())
            : arith::ConstantIndexOp::create(b, index.getLoc(), 0).getResult();
    b.replaceOp(index, value);
  }
}

/// `value` (a buffer whose last dimension the innermost loop indexes)
/// restricted to [begin, begin + size) in that dimension.
static Value sliceLast(OpBuilder &b, Location loc, Value value, int64_t begin,
                       int64_t size) {
  auto type = cast<MemRefType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes = memref::getMixedSizes(b, loc, value),
      strides(rank, b.getIndexAttr(1));
  offsets.back() = b.getIndexAttr(begin);
  sizes.back() = b.getIndexAttr(size);
  return memref::SubViewOp::create(b, loc, value, offsets, sizes, strides);
}

/// `value` without the dimensions that `map` indexes by a constant (size 1
/// here: a loop with one iteration, or a kept dimension), and `map` without
/// those results: linalg::vectorize takes projected permutations only.
static std::pair<Value, AffineMap>
dropConstantDims(OpBuilder &b, Location loc, Value value, AffineMap map) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return {value, map};
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> results;
  for (auto [i, result] : llvm::enumerate(map.getResults())) {
    if (isa<AffineConstantExpr>(result))
      continue;
    shape.push_back(type.getDimSize(i));
    results.push_back(result);
  }
  if (results.size() == map.getNumResults())
    return {value, map};
  Value reduced =
      memref::createCanonicalRankReducingSubViewOp(b, loc, value, shape);
  return {reduced,
          AffineMap::get(map.getNumDims(), 0, results, map.getContext())};
}

/// Replaces `tile` (a row: every loop range 1 but the innermost, of `rows`
/// elements) by the lane-wise reduction into `acc`, the combination of the
/// lanes into the result, and a scalar tail for what the lanes do not divide.
static void splitRow(RewriterBase &b, linalg::LinalgOp tile, const Plan &plan,
                     Value acc) {
  Location loc = tile.getLoc();
  MLIRContext *ctx = b.getContext();
  unsigned inner = tile.getNumLoops() - 1;
  int64_t rows = tile.getStaticLoopRanges()[inner];
  int64_t body = rows / plan.lanes * plan.lanes;
  Value init = tile.getDpsInitOperand(0)->get();
  AffineMap initMap = tile.getMatchingIndexingMap(tile.getDpsInitOperand(0));

  // acc[l] = identity; acc[l] = combine(acc[l], f(in[.., k * lanes + l])).
  Value identity = arith::ConstantOp::create(b, loc, plan.identity);
  linalg::FillOp::create(b, loc, identity, acc);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  // Every outer loop of the tile has one iteration: its index is 0. The new
  // ops iterate over k and l (lane-wise) and over l (the combination) only;
  // a loop that no operand indexes would make their maps non-invertible.
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  auto outerToZero = [&](AffineMap map, unsigned newDims, AffineExpr last) {
    SmallVector<AffineExpr> dims(inner, zero);
    dims.push_back(last);
    return map.replaceDimsAndSymbols(dims, {}, newDims, 0);
  };
  AffineExpr k = getAffineDimExpr(0, ctx), l = getAffineDimExpr(1, ctx);
  for (OpOperand *operand : tile.getDpsInputOperands()) {
    AffineMap map = tile.getMatchingIndexingMap(operand);
    Value value = operand->get();
    AffineMap lanewiseMap = outerToZero(map, 2, k);
    if (isa<MemRefType>(value.getType()) && map.isFunctionOfDim(inner)) {
      auto type = cast<MemRefType>(value.getType());
      Value part = sliceLast(b, loc, value, 0, body);
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        groups.push_back({d});
      groups.push_back({type.getRank() - 1, type.getRank()});
      SmallVector<int64_t> shape(type.getShape());
      shape.back() = body / plan.lanes;
      shape.push_back(plan.lanes);
      value = memref::ExpandShapeOp::create(b, loc, shape, part, groups);
      // [.., n] -> [.., n / lanes, lanes]: the last index becomes (k, l).
      SmallVector<AffineExpr> results(lanewiseMap.getResults());
      results.push_back(l);
      lanewiseMap = AffineMap::get(2, 0, results, ctx);
    }
    std::tie(value, lanewiseMap) = dropConstantDims(b, loc, value, lanewiseMap);
    inputs.push_back(value);
    maps.push_back(lanewiseMap);
  }
  maps.push_back(AffineMap::get(2, 0, l));
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::reduction,
                                                utils::IteratorType::parallel};
  auto lanewise = linalg::GenericOp::create(b, loc, TypeRange(), inputs,
                                            ValueRange{acc}, maps, iterators);
  IRMapping same;
  tile->getRegion(0).cloneInto(&lanewise.getRegion(), same);
  // An index of the row (a one-hot or a position mask fused in): k * lanes
  // + l of the lane-wise loops.
  remapRowIndices(b, lanewise, inner, [&](OpBuilder &nested, Location at) {
    Value chunk = linalg::IndexOp::create(nested, at, 0);
    Value lane = linalg::IndexOp::create(nested, at, 1);
    Value width = arith::ConstantIndexOp::create(nested, at, plan.lanes);
    return arith::AddIOp::create(
        nested, at, arith::MulIOp::create(nested, at, chunk, width), lane);
  });
  b.setInsertionPointAfter(lanewise);

  // result = combine(result, acc[l]) over l.
  SmallVector<utils::IteratorType> combineIterators = {
      utils::IteratorType::reduction};
  AffineMap laneMap = AffineMap::get(1, 0, getAffineDimExpr(0, ctx));
  initMap = outerToZero(initMap, 1, getAffineDimExpr(0, ctx));
  std::tie(init, initMap) = dropConstantDims(b, loc, init, initMap);
  auto combine = linalg::GenericOp::create(
      b, loc, TypeRange(), ValueRange{acc}, ValueRange{init},
      ArrayRef<AffineMap>{laneMap, initMap}, combineIterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        BlockArgument out = tile.getRegionOutputArgs()[0];
        IRMapping map;
        for (Value operand : plan.combiner->getOperands())
          map.map(operand, operand == out ? args[1] : args[0]);
        Operation *folded = nested.clone(*plan.combiner, map);
        linalg::YieldOp::create(nested, nestedLoc, folded->getResult(0));
      });
  // (Building the body moved the insertion point into it.)
  b.setInsertionPointAfter(combine);

  // The elements past the last whole vector, one at a time.
  if (body < rows) {
    SmallVector<Value> operands;
    for (OpOperand &operand : tile->getOpOperands()) {
      Value value = operand.get();
      bool isInput = tile.isDpsInput(&operand);
      if (isInput && isa<MemRefType>(value.getType()) &&
          tile.getMatchingIndexingMap(&operand).isFunctionOfDim(inner))
        value = sliceLast(b, loc, value, body, rows - body);
      operands.push_back(value);
    }
    Operation *tail = b.clone(*tile);
    tail->setOperands(operands);
    // Its row starts at `body`.
    remapRowIndices(b, tail, inner, [&](OpBuilder &nested, Location at) {
      Value offset = arith::ConstantIndexOp::create(nested, at, body);
      return arith::AddIOp::create(
          nested, at, linalg::IndexOp::create(nested, at, inner), offset);
    });
  }
  b.eraseOp(tile);
}

struct SplitRowReductionsPass
    : public ga::impl::SplitRowReductionsBase<SplitRowReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (vectorWidth == 0 || func.isExternal())
      return;
    if (vectorWidth < 64 || !llvm::isPowerOf2_32(vectorWidth)) {
      emitError(func.getLoc())
          << "ga-split-row-reductions: vector-width must be 0 (off) or a "
             "power of two of at least 64 bits, got "
          << vectorWidth.getValue();
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, Plan>> candidates;
    func.walk([&](linalg::LinalgOp op) {
      if (std::optional<Plan> plan = planSplit(op, vectorWidth))
        candidates.push_back({op, *plan});
    });

    IRRewriter rewriter(&getContext());
    for (auto &[op, plan] : candidates) {
      // One row at a time: every loop but the innermost tiled by 1.
      SmallVector<int64_t> tileSizes(op.getNumLoops(), 1);
      tileSizes.back() = 0;
      rewriter.setInsertionPoint(op);
      linalg::LinalgTilingOptions tiling;
      tiling.setTileSizes(tileSizes);
      if (parallelRows)
        tiling.setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, tiling);
      if (failed(tiled))
        continue;
      rewriter.eraseOp(op);
      // The combiner of the tile's own payload (the op's is gone).
      SmallVector<Operation *> combiners;
      matchReduction(tiled->op.getRegionOutputArgs(), 0, combiners);
      plan.combiner = combiners.front();
      Value acc = createLaneBuffer(rewriter, func, *tiled, plan);
      rewriter.setInsertionPoint(tiled->op);
      splitRow(rewriter, tiled->op, plan, acc);
      ++numSplit;
    }
  }

  /// The lane buffer of the rows of `tiled`: one on the stack of the
  /// function when rows are reduced one after the other; with parallel
  /// rows, one per iteration of the innermost parallel loop around the rows
  /// (an automatic allocation scope: the buffer lives for one iteration, on
  /// the stack of the thread that runs it, and the rows of that iteration,
  /// in the sequential loops of reduction dimensions inside it, take turns
  /// in it).
  Value createLaneBuffer(IRRewriter &rewriter, func::FuncOp func,
                         const linalg::TiledLinalgOp &tiled, const Plan &plan) {
    auto type = MemRefType::get({plan.lanes}, plan.elementType);
    scf::ParallelOp parallel;
    for (Operation *loop : tiled.loops)
      if (auto p = dyn_cast<scf::ParallelOp>(loop);
          p && (!parallel || parallel->isProperAncestor(p)))
        parallel = p;
    if (parallel)
      rewriter.setInsertionPointToStart(parallel.getBody());
    else
      rewriter.setInsertionPointToStart(&func.getBody().front());
    return memref::AllocaOp::create(rewriter, tiled.op->getLoc(), type);
  }
};

} // namespace
