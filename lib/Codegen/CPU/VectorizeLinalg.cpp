//===- VectorizeLinalg.cpp - tile and vectorize linalg ops on buffers -----===//
//
// Vectorizes the linalg ops that the CPU lowering does not hand to a BLAS
// along their contiguous innermost dimension: tile by one vector, then
// linalg::vectorize each tile, then lower the vector ops to the 1-d form that
// convert-vector-to-llvm takes.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

namespace mlir::ga {
#define GEN_PASS_DEF_VECTORIZELINALG
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether buffers of `type` hold their elements the way a vector of `type`
/// does. LLVM packs vector elements whose width is not a whole number of bytes
/// (a `vector<8xi1>` store writes one byte) and pads widths that are not a
/// power of two in memory (an `i24` takes 4 bytes), while a memref gives every
/// element its own ABI-sized slot: a vector load or store of such a buffer
/// reads or writes the wrong bytes.
static bool hasVectorLayout(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits >= 8 && llvm::isPowerOf2_32(bits);
}

/// Whether the strides of the buffer `value` are known at compile time.
static bool hasStaticStrides(Value value) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(cast<MemRefType>(value.getType())
                 .getStridesAndOffset(strides, offset)))
    return false;
  return llvm::none_of(strides, ShapedType::isDynamic);
}

/// A 0-d `vector.transfer_read` of a buffer (what linalg::vectorize makes of
/// an operand that every lane of a tile reads whole, e.g. a per-sample scalar
/// broadcast over the sample's features) as a `memref.load` and a broadcast.
/// convert-vector-to-llvm lowers a transfer only through a vector load, which
/// needs a unit innermost stride: a read of one column of a wider buffer
/// (`memref<1xi64, strided<[1289]>>`) was left unlowered. One element is read
/// either way.
struct ScalarTransferReadToLoad final
    : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getVectorType().getRank() != 0 || op.getMask() ||
        !isa<MemRefType>(op.getBase().getType()))
      return failure();
    Value element = memref::LoadOp::create(rewriter, op.getLoc(), op.getBase(),
                                           op.getIndices());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, op.getVectorType(),
                                                     element);
    return success();
  }
};

/// Whether the payload of `op` has an op whose vector form the LLVM lowering
/// rejects: `math.fpowi` / `math.ipowi` take a scalar exponent in LLVM
/// (`llvm.intr.powi`), but the vectorizer broadcasts it to a vector.
static bool hasScalarOnlyPayloadOp(linalg::LinalgOp op) {
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<math::FPowIOp, math::IPowIOp>(inner);
  });
}

/// Whether `expr` is the loop dimension `inner` plus a sum of other loop
/// dimensions, each times a constant: `d_inner`, `d_inner + d_j * c + ...`
/// (no constant term, no other operation). Inside a tile whose other loops
/// have one iteration, such an index moves with `inner` alone, by 1.
static bool isInnerPlusOuterDims(AffineExpr expr, unsigned inner) {
  bool seenInner = false;
  std::function<bool(AffineExpr)> visit = [&](AffineExpr e) -> bool {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      if (dim.getPosition() != inner)
        return true;
      if (seenInner)
        return false;
      return seenInner = true;
    }
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return false;
    if (bin.getKind() == AffineExprKind::Add)
      return visit(bin.getLHS()) && visit(bin.getRHS());
    if (bin.getKind() != AffineExprKind::Mul)
      return false;
    // d_j * c with j != inner (the simplifier puts the constant right).
    auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
    return dim && dim.getPosition() != inner &&
           isa<AffineConstantExpr>(bin.getRHS());
  };
  return visit(expr) && seenInner;
}

/// The indexing maps of `op` inside one of its tiles (by 1 along every
/// loop but `inner`, whose loops other than `inner` take only the value 0),
/// each result that is not a plain loop dimension replaced by the one it
/// equals there: `ow + kw` is `ow`, `oh * 2 + kh` is `oh` (0 either way).
/// The im2col copy of a convolution (ga-convolutions-to-products) reads its
/// input at such sums; with plain dimensions linalg::vectorize reads each
/// tile's window as one contiguous vector. nullopt when a result has no
/// such equivalent (a constant term, a division, a term of `inner` other
/// than `inner` itself) or the new maps repeat a dimension.
static std::optional<SmallVector<AffineMap>> mapsInsideTile(linalg::LinalgOp op,
                                                            unsigned inner) {
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  SmallVector<AffineExpr> atZero;
  for (unsigned d = 0; d < numLoops; ++d)
    atZero.push_back(d == inner ? getAffineDimExpr(d, ctx)
                                : getAffineConstantExpr(0, ctx));
  SmallVector<AffineMap> maps;
  for (AffineMap map : op.getIndexingMapsArray()) {
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      if (isa<AffineDimExpr>(expr)) {
        results.push_back(expr);
        continue;
      }
      AffineExpr value = simplifyAffineExpr(
          expr.replaceDimsAndSymbols(atZero, {}), numLoops, 0);
      if (isa<AffineDimExpr>(value)) {
        results.push_back(value);
        continue;
      }
      auto zero = dyn_cast<AffineConstantExpr>(value);
      if (!zero || zero.getValue() != 0)
        return std::nullopt;
      // 0 inside the tile: a loop of `expr` that this map does not index
      // otherwise (it is not `inner`: `inner` would not vanish).
      std::optional<unsigned> unused;
      for (unsigned d = 0; d < numLoops && !unused; ++d)
        if (expr.isFunctionOfDim(d) &&
            llvm::none_of(map.getResults(), [&](AffineExpr other) {
              return other != expr && other.isFunctionOfDim(d);
            }))
          unused = d;
      if (!unused)
        return std::nullopt;
      results.push_back(getAffineDimExpr(*unused, ctx));
    }
    AffineMap plain = AffineMap::get(numLoops, 0, results, ctx);
    if (!plain.isProjectedPermutation())
      return std::nullopt;
    maps.push_back(plain);
  }
  return maps;
}

/// A generic like `op` (its iterators and body, the body moved over) on
/// `operands` (inputs then inits, as `op` has them) with indexing maps
/// `maps`; `op` is erased.
static linalg::LinalgOp rebuildGeneric(RewriterBase &rewriter,
                                       linalg::GenericOp op,
                                       ArrayRef<Value> operands,
                                       ArrayRef<AffineMap> maps) {
  rewriter.setInsertionPoint(op);
  unsigned numInputs = op.getNumDpsInputs();
  auto plain = linalg::GenericOp::create(
      rewriter, op.getLoc(), op.getResultTypes(),
      operands.take_front(numInputs), operands.drop_front(numInputs), maps,
      op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), plain.getRegion(),
                              plain.getRegion().end());
  rewriter.eraseOp(op);
  return plain;
}

/// `op` with each operand that some indexing-map result reads at the
/// constant 0 (a size-1 dimension broadcast by torch-mlir's lowering:
/// BatchNorm's per-channel scale at `(0, c, 0, 0)`) replaced by a
/// rank-reduced view without those dimensions, and the results dropped:
/// linalg::vectorize takes only maps of plain loop dimensions. The same
/// elements are read and written. `op` itself when it has no such operand
/// (or one of a dynamic shape).
static linalg::LinalgOp dropZeroIndexedDims(RewriterBase &rewriter,
                                            linalg::GenericOp op) {
  auto isZero = [](AffineExpr e) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    return c && c.getValue() == 0;
  };
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  bool changed = false;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        llvm::none_of(map.getResults(), isZero)) {
      operands.push_back(operand.get());
      maps.push_back(map);
      continue;
    }
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> shape;
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [r, expr] : llvm::enumerate(map.getResults())) {
      int64_t size = isZero(expr) ? 1 : type.getDimSize(r);
      if (!isZero(expr)) {
        kept.push_back(expr);
        shape.push_back(size);
      }
      offsets.push_back(rewriter.getIndexAttr(0));
      sizes.push_back(rewriter.getIndexAttr(size));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    MemRefType reduced = memref::SubViewOp::inferRankReducedResultType(
        shape, type, offsets, sizes, strides);
    operands.push_back(memref::SubViewOp::create(
        rewriter, loc, reduced, operand.get(), offsets, sizes, strides));
    maps.push_back(AffineMap::get(map.getNumDims(), 0, kept, op.getContext()));
    changed = true;
  }
  if (!changed)
    return op;
  return rebuildGeneric(rewriter, op, operands, maps);
}

/// The number of lanes to vectorize `op` with, or nullopt if it does not
/// qualify (see the pass description).
static std::optional<int64_t> planLanes(linalg::LinalgOp op,
                                        unsigned vectorWidth) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      hasScalarOnlyPayloadOp(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  unsigned inner = op.getNumLoops() - 1;
  if (op.getIteratorTypesArray()[inner] != utils::IteratorType::parallel ||
      ranges[inner] < 2)
    return std::nullopt;
  unsigned widest = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    Type elem = getElementTypeOrSelf(operand.get().getType());
    if (!elem.isIntOrFloat())
      return std::nullopt;
    widest = std::max(widest, elem.getIntOrFloatBitWidth());
    if (!isa<MemRefType>(operand.get().getType()))
      continue; // a scalar, broadcast
    if (!hasVectorLayout(elem))
      return std::nullopt; // i1 masks and other sub-byte or odd widths
    AffineMap map = op.getMatchingIndexingMap(&operand);
    // A buffer read whole by every lane is read as a 0-d vector, which
    // convert-vector-to-llvm lowers only with static strides (a buffer that
    // came out of an scf.if has dynamic ones).
    if (!map.isFunctionOfDim(inner) && !hasStaticStrides(operand.get()))
      return std::nullopt;
    for (unsigned r = 0, e = map.getNumResults(); r < e; ++r) {
      if (!map.getResult(r).isFunctionOfDim(inner))
        continue;
      // Contiguous: the innermost loop indexes the last dimension, alone or
      // plus outer loops (a window of a convolution's im2col copy, `ow +
      // kw`: one loop per tile, see mapsInsideTile).
      if (r != e - 1 || !isInnerPlusOuterDims(map.getResult(r), inner) ||
          !cast<MemRefType>(operand.get().getType()).isLastDimUnitStride())
        return std::nullopt;
    }
  }
  int64_t lanes = vectorWidth / std::max(widest, 1u);
  if (lanes < 2)
    return std::nullopt;
  return std::min(lanes, ranges[inner]);
}

struct VectorizeLinalgPass
    : public ga::impl::VectorizeLinalgBase<VectorizeLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    if (vectorWidth == 0)
      return;
    if (vectorWidth < 64 || !llvm::isPowerOf2_32(vectorWidth)) {
      emitError(func.getLoc())
          << "ga-vectorize-linalg: vector-width must be 0 (off) or a power of "
             "two of at least 64 bits, got "
          << vectorWidth.getValue();
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    func.walk([&](linalg::LinalgOp op) { candidates.push_back(op); });

    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : candidates) {
      std::optional<int64_t> lanes = planLanes(op, vectorWidth);
      if (!lanes)
        continue;
      // Dropping the dimensions read at 0 changes no loop and no access to
      // the innermost one: `lanes` holds for the new op.
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        op = dropZeroIndexedDims(rewriter, generic);
      // Maps with sums (an im2col copy) are plain only inside a tile (see
      // mapsInsideTile); such a tile is checked once built.
      bool plainMaps = llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
        return m.isProjectedPermutation();
      });
      std::optional<SmallVector<AffineMap>> tileMaps;
      if (!plainMaps) {
        if (isa<linalg::GenericOp>(op.getOperation()))
          tileMaps = mapsInsideTile(op, op.getNumLoops() - 1);
        if (!tileMaps)
          continue;
      } else if (failed(linalg::vectorizeOpPrecondition(op))) {
        continue;
      }
      SmallVector<int64_t> tileSizes(op.getNumLoops(), 1);
      tileSizes.back() = *lanes;
      rewriter.setInsertionPoint(op);
      linalg::LinalgTilingOptions tiling;
      tiling.setTileSizes(tileSizes);
      if (parallelLoops) {
        tiling.setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
        // Parallel tiles outermost: one parallel region per op, not one per
        // step of an enclosing reduction loop.
        SmallVector<unsigned> order;
        for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
          if (kind == utils::IteratorType::parallel)
            order.push_back(i);
        for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
          if (kind != utils::IteratorType::parallel)
            order.push_back(i);
        tiling.setInterchange(order);
      }
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, tiling);
      if (failed(tiled))
        continue;
      rewriter.eraseOp(op);
      auto tile = cast<linalg::LinalgOp>(tiled->op);
      if (tileMaps) {
        auto generic = cast<linalg::GenericOp>(tile.getOperation());
        SmallVector<Value> operands(generic->getOperands());
        tile = rebuildGeneric(rewriter, generic, operands, *tileMaps);
        if (failed(linalg::vectorizeOpPrecondition(tile)))
          continue; // the tile stays a (correct) scalar linalg op
      }
      // A remainder tile has a dynamic size: vectorize it masked to the full
      // vector length.
      bool masked =
          llvm::any_of(tile.getStaticLoopRanges(), ShapedType::isDynamic);
      SmallVector<int64_t> vectorSizes;
      SmallVector<bool> scalable;
      if (masked) {
        vectorSizes = tileSizes;
        scalable.assign(tileSizes.size(), false);
      }
      rewriter.setInsertionPoint(tile);
      FailureOr<linalg::VectorizationResult> result =
          linalg::vectorize(rewriter, tile, vectorSizes, scalable);
      if (failed(result))
        continue; // the tile stays a (correct) scalar linalg op
      rewriter.eraseOp(tile);
      ++numVectorized;
    }

    // Down to 1-d vectors and plain (masked) loads and stores: the form
    // convert-vector-to-llvm takes.
    RewritePatternSet patterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerParallel);
    patterns.add<ScalarTransferReadToLoad>(ctx);
    vector::BroadcastOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
    vector::ExtractOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(func, std::move(patterns)))) {
      func.emitError("ga-vectorize-linalg: the vector lowering patterns did "
                     "not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
