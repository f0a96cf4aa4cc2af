//===- UnrollConvolutionWindows.cpp - depthwise convolutions as windows ---===//
//
// --ga-unroll-convolution-windows: rewrites a linalg convolution without
// output channels (depthwise) into one element-wise linalg.generic over its
// output that reads, for every position of the filter, the strided window
// of the input that this position multiplies (a tensor.extract_slice), and
// the filter's values at that position.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "ConvolutionRewrites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_UNROLLCONVOLUTIONWINDOWS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// A convolution's window at one filter position: the loop dimensions are
/// those of the output (`parallel`, in loop order), the filter loops fixed.
struct Window {
  Value input, filter;
  AffineMap inputMap, filterMap;
};

/// The affine expression `e` (over the new loop dimensions) as
/// `coefficient * d + offset`: sets `dim` (-1 for none), `coefficient` and
/// `offset`, or fails when it is not of that form.
static LogicalResult splitLinear(AffineExpr e, unsigned numDims, int &dim,
                                 int64_t &coefficient, int64_t &offset) {
  MLIRContext *ctx = e.getContext();
  SmallVector<AffineExpr> zeros(numDims, getAffineConstantExpr(0, ctx));
  auto constant = [&](AffineExpr x) -> std::optional<int64_t> {
    auto c = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(x, numDims, 0));
    return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
  };
  std::optional<int64_t> base = constant(e.replaceDims(zeros));
  if (!base)
    return failure();
  offset = *base, dim = -1, coefficient = 0;
  for (unsigned d = 0; d < numDims; ++d) {
    if (!e.isFunctionOfDim(d))
      continue;
    if (dim != -1)
      return failure(); // two loops in one index
    SmallVector<AffineExpr> unit(zeros);
    unit[d] = getAffineConstantExpr(1, ctx);
    std::optional<int64_t> atOne = constant(e.replaceDims(unit));
    if (!atOne || *atOne - offset <= 0)
      return failure();
    dim = d, coefficient = *atOne - offset;
  }
  // Linear in that loop: the expression is exactly coefficient * d + offset.
  AffineExpr rebuilt = getAffineConstantExpr(offset, ctx);
  if (dim != -1)
    rebuilt = getAffineDimExpr(dim, ctx) * coefficient + offset;
  if (simplifyAffineExpr(e - rebuilt, numDims, 0) !=
      getAffineConstantExpr(0, ctx))
    return failure();
  return success();
}

/// The slice of `source` that `map` (with the filter loops fixed) reads,
/// and the map that reads the slice: a rank-reduced tensor.extract_slice
/// whose dimensions are the loops of `map`'s results (constant results
/// dropped). Fails when a result is not `coefficient * d + offset` or the
/// window leaves `source`.
static FailureOr<std::pair<Value, AffineMap>>
sliceFor(OpBuilder &b, Location loc, Value source, AffineMap map,
         ArrayRef<int64_t> newRanges) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> results;
  for (auto [r, e] : llvm::enumerate(map.getResults())) {
    int dim;
    int64_t coefficient, offset;
    if (failed(splitLinear(e, map.getNumDims(), dim, coefficient, offset)))
      return failure();
    int64_t size = dim == -1 ? 1 : newRanges[dim];
    if (offset < 0 || offset + coefficient * (size - 1) >= type.getDimSize(r))
      return failure();
    offsets.push_back(b.getIndexAttr(offset));
    sizes.push_back(b.getIndexAttr(size));
    strides.push_back(b.getIndexAttr(dim == -1 ? 1 : coefficient));
    if (dim == -1)
      continue;
    shape.push_back(size);
    results.push_back(b.getAffineDimExpr(dim));
  }
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, source,
                                               offsets, sizes, strides);
  return std::make_pair(
      slice, AffineMap::get(map.getNumDims(), 0, results, b.getContext()));
}

/// The filter `filter` (indexed by `map`) transposed so that its dimensions
/// indexed by filter loops come first, and the map that indexes the copy: a
/// position's values are then contiguous (a broadcast read of a strided
/// slice is not vectorized). The filter is small; unchanged when already so.
static std::pair<Value, AffineMap>
filterLoopsFirst(OpBuilder &b, Location loc, Value filter, AffineMap map,
                 ArrayRef<unsigned> filterLoops) {
  SmallVector<int64_t> permutation;
  auto involvesFilterLoop = [&](AffineExpr e) {
    return llvm::any_of(filterLoops,
                        [&](unsigned d) { return e.isFunctionOfDim(d); });
  };
  for (bool first : {true, false})
    for (auto [r, e] : llvm::enumerate(map.getResults()))
      if (involvesFilterLoop(e) == first)
        permutation.push_back(r);
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return {filter, map};
  auto type = cast<RankedTensorType>(filter.getType());
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> results;
  for (int64_t r : permutation) {
    shape.push_back(type.getDimSize(r));
    results.push_back(map.getResult(r));
  }
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  Value transposed =
      linalg::TransposeOp::create(b, loc, filter, empty, permutation)
          .getResult()[0];
  return {transposed,
          AffineMap::get(map.getNumDims(), 0, results, b.getContext())};
}

/// Why `op` is not rewritten, or the empty string.
static StringRef mismatch(linalg::LinalgOp op,
                          linalg::ConvolutionDimensions &dims,
                          unsigned maxPositions) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return "not a convolution on tensors";
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      return "dynamic shapes";
  }
  if (!linalg::detail::isContractionBody(
          *op.getBlock(), [](Operation *mul, Operation *add) {
            return isa<arith::MulFOp>(mul) && isa<arith::AddFOp>(add);
          }))
    return "not a floating-point multiply-add";
  FailureOr<linalg::ConvolutionDimensions> inferred =
      linalg::inferConvolutionDims(op);
  if (failed(inferred))
    return "no convolution dimensions";
  dims = *inferred;
  if (!dims.outputChannel.empty() || !dims.inputChannel.empty())
    return "channels (not depthwise: the products take it)";
  if (dims.batch.size() + dims.outputImage.size() + dims.depth.size() +
          dims.filterLoop.size() !=
      op.getNumLoops())
    return "loop dimensions that are not convolution dimensions";
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!out.isProjectedPermutation() ||
      out.getNumResults() != op.getNumLoops() - dims.filterLoop.size())
    return "an output not indexed by its loops";
  int64_t positions = 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d : dims.filterLoop)
    positions *= ranges[d];
  if (positions > maxPositions)
    return "more filter positions than max-positions";
  return "";
}

/// The windows of `op` at every filter position (the positions in the
/// order of the loop nest: the first filter loop outermost), or failure.
static FailureOr<SmallVector<Window>>
buildWindows(OpBuilder &b, linalg::LinalgOp op,
             const linalg::ConvolutionDimensions &dims,
             ArrayRef<unsigned> parallel) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> newRanges;
  SmallVector<AffineExpr> replacement(numLoops);
  for (auto [i, d] : llvm::enumerate(parallel)) {
    replacement[d] = b.getAffineDimExpr(i);
    newRanges.push_back(ranges[d]);
  }
  SmallVector<unsigned> filterLoops(dims.filterLoop.begin(),
                                    dims.filterLoop.end());
  llvm::sort(filterLoops);
  Value sources[2] = {op.getDpsInputOperand(0)->get(),
                      op.getDpsInputOperand(1)->get()};
  AffineMap sourceMaps[2] = {
      op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
      op.getMatchingIndexingMap(op.getDpsInputOperand(1))};
  std::tie(sources[1], sourceMaps[1]) =
      filterLoopsFirst(b, loc, sources[1], sourceMaps[1], filterLoops);
  SmallVector<int64_t> position(filterLoops.size(), 0);
  SmallVector<Window> windows;
  while (true) {
    for (auto [d, p] : llvm::zip(filterLoops, position))
      replacement[d] = b.getAffineConstantExpr(p);
    Window window;
    for (unsigned index = 0; index < 2; ++index) {
      AffineMap map = sourceMaps[index].replaceDimsAndSymbols(
          replacement, {}, parallel.size(), 0);
      FailureOr<std::pair<Value, AffineMap>> slice =
          sliceFor(b, loc, sources[index], map, newRanges);
      if (failed(slice))
        return failure();
      (index == 0 ? window.input : window.filter) = slice->first;
      (index == 0 ? window.inputMap : window.filterMap) = slice->second;
    }
    windows.push_back(window);
    // The next position, the last filter loop fastest.
    int i = static_cast<int>(position.size()) - 1;
    for (; i >= 0; --i) {
      if (++position[i] < ranges[filterLoops[i]])
        break;
      position[i] = 0;
    }
    if (i < 0)
      return windows;
  }
}

/// Replaces `op` by one element-wise generic that adds, at every filter
/// position in loop order, that position's products into the init (the
/// convolution's own body inlined once per position).
static LogicalResult rewrite(RewriterBase &rewriter, linalg::LinalgOp op,
                             const linalg::ConvolutionDimensions &dims) {
  // The new loops in the output's order: the output is read and written
  // along its layout, its last dimension innermost (the vectorized one).
  SmallVector<unsigned> parallel;
  for (AffineExpr e :
       op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults())
    parallel.push_back(cast<AffineDimExpr>(e).getPosition());
  rewriter.setInsertionPoint(op);
  FailureOr<SmallVector<Window>> windows =
      buildWindows(rewriter, op, dims, parallel);
  if (failed(windows))
    return failure();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (const Window &w : *windows) {
    inputs.append({w.input, w.filter});
    maps.append({w.inputMap, w.filterMap});
  }
  SmallVector<AffineExpr> replacement(op.getNumLoops(),
                                      rewriter.getAffineConstantExpr(0));
  for (auto [i, d] : llvm::enumerate(parallel))
    replacement[d] = rewriter.getAffineDimExpr(i);
  maps.push_back(
      op.getMatchingIndexingMap(op.getDpsInitOperand(0))
          .replaceDimsAndSymbols(replacement, {}, parallel.size(), 0));
  Block *body = op.getBlock();
  SmallVector<utils::IteratorType> iterators(parallel.size(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), inputs,
      ValueRange{op.getDpsInitOperand(0)->get()}, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value acc = args.back();
        for (size_t k = 0; k < windows->size(); ++k) {
          IRMapping mapping;
          mapping.map(body->getArgument(0), args[2 * k]);
          mapping.map(body->getArgument(1), args[2 * k + 1]);
          mapping.map(body->getArgument(2), acc);
          for (Operation &inner : body->without_terminator())
            b.clone(inner, mapping);
          acc = mapping.lookup(body->getTerminator()->getOperand(0));
        }
        linalg::YieldOp::create(b, loc, acc);
      });
  rewriter.replaceOp(op, generic->getResults());
  return success();
}

struct UnrollConvolutionWindowsPass
    : public ga::impl::UnrollConvolutionWindowsBase<
          UnrollConvolutionWindowsPass> {
  using Base::Base;

  void runOnOperation() override {
    ga::detail::ConvolutionCounts counts = ga::detail::rewriteConvolutions(
        getOperation(), remarks, "convolution windows not unrolled: ",
        [&](IRRewriter &rewriter, linalg::LinalgOp op) -> StringRef {
          linalg::ConvolutionDimensions dims;
          StringRef why = mismatch(op, dims, maxPositions);
          if (why.empty() && failed(rewrite(rewriter, op, dims)))
            why = "a window that is not a strided slice of the input";
          return why;
        });
    numRewritten += counts.rewritten;
    numLeft += counts.left;
  }
};

} // namespace
