//===- ConvolutionsToProducts.cpp - convolutions as im2col + matmul -------===//
//
// --ga-convolutions-to-products: rewrites linalg convolutions on tensors into
// an im2col copy (a linalg.generic that reads the input through the
// convolution's own input indexing map) and matrix products (linalg.matmul,
// one per batch and group index) that the library lowerings (CBLAS,
// cuBLASLt) turn into GEMM calls.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "ConvolutionRewrites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONVOLUTIONSTOPRODUCTS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// A convolution read as a product: for every group g, out[g] (M x P) +=
/// filter[g] (M x K) times col[g] (K x P), where col is the im2col copy of
/// the input and P runs over the batch and the output image (one product for
/// all samples). Each group of dimensions is a list of loop dimensions in the
/// order in which the packed operands hold them.
struct ConvolutionLayout {
  /// The depth (group) dimensions: the outermost of the packed output and
  /// filter (`outer`, the index of the loop of products, is the same list).
  SmallVector<unsigned> outer, depth;
  /// Output channels (GEMM M), in the output's order.
  SmallVector<unsigned> channels;
  /// Input channels and filter loops in the filter's order (GEMM K).
  SmallVector<unsigned> reduced;
  /// Batch, then output image dimensions, in the output's order (GEMM N).
  SmallVector<unsigned> image;
  /// When the output (filter) is not laid out [depth, channels, image]
  /// ([depth, channels, reduced]), the linalg.transpose permutation that
  /// packs it so; empty otherwise.
  SmallVector<int64_t> outputPermutation, filterPermutation;
};

/// The loop dimension of each result of `map`, or failure if one is not a
/// plain dimension.
static FailureOr<SmallVector<unsigned>> resultDims(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return failure();
    dims.push_back(d.getPosition());
  }
  return dims;
}

/// The elements of `order` that are in `set`, in that order.
static SmallVector<unsigned> inOrder(ArrayRef<unsigned> order,
                                     ArrayRef<unsigned> set) {
  SmallVector<unsigned> kept;
  for (unsigned d : order)
    if (llvm::is_contained(set, d))
      kept.push_back(d);
  return kept;
}

/// The permutation that makes `actual` into `wanted` (linalg.transpose:
/// result dimension i is dimension permutation[i] of the input), empty if
/// they are equal.
static SmallVector<int64_t> packing(ArrayRef<unsigned> actual,
                                    ArrayRef<unsigned> wanted) {
  if (actual == wanted)
    return {};
  SmallVector<int64_t> permutation;
  for (unsigned d : wanted)
    permutation.push_back(llvm::find(actual, d) - actual.begin());
  return permutation;
}

/// Matches a convolution whose operands the product can read as matrices:
/// float elements of one type, a multiply-add body, static shapes, an output
/// laid out as [batch..., depth..., channels..., image...] and a filter as
/// [depth..., channels..., (input channels, filter loops in any order)...].
/// Sets `why` to the reason of a failure.
static FailureOr<ConvolutionLayout> matchConvolution(linalg::LinalgOp op,
                                                     StringRef &why) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaConvolutionOpInterface(op))
    return why = "not a convolution on tensors", failure();
  Type elem = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || type.getElementType() != elem)
      return why = "dynamic shapes or mixed element types", failure();
  }
  if (!isa<FloatType>(elem) ||
      !linalg::detail::isContractionBody(
          *op.getBlock(), [](Operation *mul, Operation *add) {
            return isa<arith::MulFOp>(mul) && isa<arith::AddFOp>(add);
          }))
    return why = "not a floating-point multiply-add", failure();
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims) || dims->outputChannel.empty())
    return why = "no output channel dimension (depthwise)", failure();
  size_t classified = dims->batch.size() + dims->outputImage.size() +
                      dims->outputChannel.size() + dims->filterLoop.size() +
                      dims->inputChannel.size() + dims->depth.size();
  if (classified != op.getNumLoops())
    return why = "loop dimensions that are not convolution dimensions",
           failure();

  FailureOr<SmallVector<unsigned>> out =
      resultDims(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  FailureOr<SmallVector<unsigned>> filter =
      resultDims(op.getMatchingIndexingMap(op.getDpsInputOperand(1)));
  if (failed(out) || failed(filter))
    return why = "output or filter not indexed by plain dimensions", failure();
  if (out->size() != dims->batch.size() + dims->depth.size() +
                         dims->outputChannel.size() +
                         dims->outputImage.size() ||
      filter->size() != dims->depth.size() + dims->outputChannel.size() +
                            dims->inputChannel.size() + dims->filterLoop.size())
    return why = "output or filter with repeated dimensions", failure();

  // The packed orders: the output's for its own dimensions, the filter's for
  // the reduced ones.
  ConvolutionLayout layout;
  layout.depth = inOrder(*out, dims->depth);
  layout.outer = layout.depth;
  layout.channels = inOrder(*out, dims->outputChannel);
  // The batch joins the image: one product for all samples.
  layout.image = inOrder(*out, dims->batch);
  llvm::append_range(layout.image, inOrder(*out, dims->outputImage));
  SmallVector<unsigned> reduced(dims->inputChannel.begin(),
                                dims->inputChannel.end());
  llvm::append_range(reduced, dims->filterLoop);
  layout.reduced = inOrder(*filter, reduced);

  SmallVector<unsigned> packedOut(layout.outer);
  llvm::append_range(packedOut, layout.channels);
  llvm::append_range(packedOut, layout.image);
  SmallVector<unsigned> packedFilter(layout.depth);
  llvm::append_range(packedFilter, layout.channels);
  llvm::append_range(packedFilter, layout.reduced);
  layout.outputPermutation = packing(*out, packedOut);
  layout.filterPermutation = packing(*filter, packedFilter);
  return layout;
}

/// The product of the static loop sizes `ranges` of `dims`.
static int64_t sizeOf(ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges) {
  int64_t size = 1;
  for (unsigned d : dims)
    size *= ranges[d];
  return size;
}

/// Reassociation of consecutive groups of `sizes[i]` dimensions each,
/// leaving out empty groups.
static SmallVector<ReassociationIndices>
consecutiveGroups(ArrayRef<size_t> sizes) {
  SmallVector<ReassociationIndices> groups;
  int64_t next = 0;
  for (size_t size : sizes) {
    if (size == 0)
      continue;
    ReassociationIndices group;
    for (size_t i = 0; i < size; ++i)
      group.push_back(next++);
    groups.push_back(group);
  }
  return groups;
}

/// The im2col copy of the convolution's input: a tensor indexed by
/// [outer..., reduced..., image...] whose element is the input element that
/// the convolution multiplies at those loop indices (read through the
/// convolution's own input indexing map, strides and dilations included).
static Value buildIm2Col(OpBuilder &b, linalg::LinalgOp op,
                         const ConvolutionLayout &layout,
                         ArrayRef<int64_t> ranges) {
  Location loc = op.getLoc();
  SmallVector<unsigned> order(layout.outer);
  llvm::append_range(order, layout.reduced);
  llvm::append_range(order, layout.image);
  // Loop dimension d of the convolution is dimension newPos[d] of the copy;
  // the output channels are not loops of the copy.
  unsigned numLoops = op.getNumLoops();
  SmallVector<AffineExpr> newPos(numLoops, b.getAffineConstantExpr(0));
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(order)) {
    newPos[d] = b.getAffineDimExpr(i);
    shape.push_back(ranges[d]);
  }
  AffineMap inputMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0))
                           .replaceDimsAndSymbols(newPos, {}, order.size(), 0);
  AffineMap colMap = b.getMultiDimIdentityMap(order.size());
  Type elem = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  Value empty = tensor::EmptyOp::create(b, loc, shape, elem);
  SmallVector<utils::IteratorType> iterators(order.size(),
                                             utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      b, loc, empty.getType(), ValueRange{op.getDpsInputOperand(0)->get()},
      ValueRange{empty}, ArrayRef<AffineMap>{inputMap, colMap}, iterators,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, args[0]);
      });
  return copy.getResult(0);
}

/// `value` transposed by `permutation` (linalg.transpose into a new tensor).
static Value transpose(OpBuilder &b, Location loc, Value value,
                       ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, empty, permutation)
      .getResult()[0];
}

/// `acc` + `lhs` * `rhs` (linalg.matmul).
static Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    Value acc) {
  return linalg::MatmulOp::create(b, loc, acc.getType(), ValueRange{lhs, rhs},
                                  ValueRange{acc})
      .getResult(0);
}

/// The 2-d slice [index, :, :] of the 3-d tensor `source`.
static Value sliceAt(OpBuilder &b, Location loc, Value source, Value index) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t rows = type.getDimSize(1), columns = type.getDimSize(2);
  SmallVector<OpFoldResult> offsets{index, b.getIndexAttr(0),
                                    b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(rows),
                                  b.getIndexAttr(columns)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto sliceType =
      RankedTensorType::get({rows, columns}, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, source, offsets,
                                        sizes, strides)
      .getResult();
}

/// An scf.for over the group index t of `outs` [G, M, P] whose body adds
/// filter[t] (or the 2-d `filter`) times cols[t] into outs[t].
static Value buildProductLoop(OpBuilder &builder, Location loc, Value filter,
                              Value cols, Value outs) {
  auto outsType = cast<RankedTensorType>(outs.getType());
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  Value count =
      arith::ConstantIndexOp::create(builder, loc, outsType.getDimSize(0));
  auto loop = scf::ForOp::create(
      builder, loc, zero, count, one, ValueRange{outs},
      [&](OpBuilder &b, Location l, Value t, ValueRange iterArgs) {
        Value acc = iterArgs[0];
        // One filter for all (rank 2) or one per group (rank 3).
        Value w = cast<RankedTensorType>(filter.getType()).getRank() == 3
                      ? sliceAt(b, l, filter, t)
                      : filter;
        Value c =
            matmul(b, l, w, sliceAt(b, l, cols, t), sliceAt(b, l, acc, t));
        SmallVector<OpFoldResult> offsets{t, b.getIndexAttr(0),
                                          b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes{b.getIndexAttr(1),
                                        b.getIndexAttr(outsType.getDimSize(1)),
                                        b.getIndexAttr(outsType.getDimSize(2))};
        SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
        Value updated = tensor::InsertSliceOp::create(b, l, c, acc, offsets,
                                                      sizes, strides);
        scf::YieldOp::create(b, l, updated);
      });
  return loop.getResult(0);
}

/// Replaces `op` by its im2col copy and one linalg.matmul per outer index
/// (an scf.for over them when there is more than one).
static void rewriteConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                               const ConvolutionLayout &layout) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t outer = sizeOf(layout.outer, ranges);
  int64_t m = sizeOf(layout.channels, ranges);
  int64_t k = sizeOf(layout.reduced, ranges);
  int64_t p = sizeOf(layout.image, ranges);
  Type elem = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());

  Value col = buildIm2Col(rewriter, op, layout, ranges);
  // One product per group; without groups (or one), the unit group
  // dimensions join the next group of dimensions of each operand.
  bool looped = outer > 1;
  auto collapse = [&](Value v, size_t outerDims, size_t rows, size_t columns,
                      int64_t numRows, int64_t numColumns) -> Value {
    SmallVector<int64_t> shape{numRows, numColumns};
    if (looped)
      shape.insert(shape.begin(), outer);
    else
      rows += outerDims, outerDims = 0;
    auto type = RankedTensorType::get(shape, elem);
    if (type == v.getType())
      return v;
    return tensor::CollapseShapeOp::create(
               rewriter, loc, type, v,
               consecutiveGroups({outerDims, rows, columns}))
        .getResult();
  };
  Value cols = collapse(col, layout.outer.size(), layout.reduced.size(),
                        layout.image.size(), k, p);
  // Output and filter packed first when they are in another layout.
  Value original = op.getDpsInitOperand(0)->get();
  Value init = original;
  if (!layout.outputPermutation.empty())
    init = transpose(rewriter, loc, init, layout.outputPermutation);
  Value outs = collapse(init, layout.outer.size(), layout.channels.size(),
                        layout.image.size(), m, p);
  // The filter has the groups outermost (one matrix per group).
  Value filter = op.getDpsInputOperand(1)->get();
  if (!layout.filterPermutation.empty())
    filter = transpose(rewriter, loc, filter, layout.filterPermutation);
  filter = collapse(filter, layout.depth.size(), layout.channels.size(),
                    layout.reduced.size(), m, k);

  // Without groups too, the product takes its operands as slices of a loop
  // over one group: element-wise fusion folds a parallel producer into a
  // contraction consumer (the im2col copy back into a convolution, a
  // transposed or flipped filter into the product's maps), but not across a
  // slice that depends on the loop's index.
  auto unitOuter = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, type.getShape());
    return tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, elem), v,
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
  };
  Value product;
  if (looped) {
    product = buildProductLoop(rewriter, loc, filter, cols, outs);
  } else {
    // In this order (function arguments are evaluated in any order).
    Value filter3 = unitOuter(filter);
    Value cols3 = unitOuter(cols);
    Value outs3 = unitOuter(outs);
    Value loop = buildProductLoop(rewriter, loc, filter3, cols3, outs3);
    product = tensor::CollapseShapeOp::create(
        rewriter, loc, outs.getType(), loop,
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
  }
  auto resultType = cast<RankedTensorType>(init.getType());
  Value result = product;
  if (resultType != product.getType()) {
    size_t outerDims = layout.outer.size(), rows = layout.channels.size();
    if (!looped)
      rows += outerDims, outerDims = 0;
    result = tensor::ExpandShapeOp::create(
        rewriter, loc, resultType, product,
        consecutiveGroups({outerDims, rows, layout.image.size()}));
  }
  if (!layout.outputPermutation.empty())
    result = transpose(rewriter, loc, result,
                       invertPermutationVector(layout.outputPermutation));
  rewriter.replaceOp(op, result);
}

struct ConvolutionsToProductsPass
    : public ga::impl::ConvolutionsToProductsBase<ConvolutionsToProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    ga::detail::ConvolutionCounts counts = ga::detail::rewriteConvolutions(
        getOperation(), remarks, "convolution left as loops: ",
        [](IRRewriter &rewriter, linalg::LinalgOp op) -> StringRef {
          StringRef why;
          FailureOr<ConvolutionLayout> layout = matchConvolution(op, why);
          if (failed(layout))
            return why;
          rewriteConvolution(rewriter, op, *layout);
          return "";
        });
    numRewritten += counts.rewritten;
    numLeft += counts.left;
  }
};

} // namespace
