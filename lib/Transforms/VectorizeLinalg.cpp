//===- VectorizeLinalg.cpp - tile and vectorize linalg ops on buffers -----===//
//
// Vectorizes the linalg ops that the CPU lowering does not hand to a BLAS
// along their contiguous innermost dimension: tile by one vector, then
// linalg::vectorize each tile, then lower the vector ops to the 1-d form that
// convert-vector-to-llvm takes.
//
//===----------------------------------------------------------------------===//

#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ga {
#define GEN_PASS_DEF_VECTORIZELINALG
#include "ga/Transforms/Passes.h.inc"
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

/// Whether the payload of `op` has an op whose vector form the LLVM lowering
/// rejects: `math.fpowi` / `math.ipowi` take a scalar exponent in LLVM
/// (`llvm.intr.powi`), but the vectorizer broadcasts it to a vector.
static bool hasScalarOnlyPayloadOp(linalg::LinalgOp op) {
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<math::FPowIOp, math::IPowIOp>(inner);
  });
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
      // Contiguous: the innermost loop indexes the last dimension, alone.
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
      if (r != e - 1 || !dim ||
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
      if (!lanes || failed(linalg::vectorizeOpPrecondition(op)))
        continue;
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
