//===- NarrowProductOperands.cpp - products read their narrow operands ----===//
//
// --ga-narrow-product-operands: a contraction whose every input is an exact
// extension (`arith.extf`) of one narrower float type reads the narrow
// tensors and extends them in its body. The products of bf16 attention that
// PyTorch computes in float32 (`q.float() @ k.float().T`) then reach cuBLASLt
// as bf16 x bf16 -> f32 products on the tensor cores instead of f32 GEMMs,
// and the transposes and reshapes between the extension and the product move
// the narrow data (replayed on it; the wide ones stay for other users).
//
// Exact: every element the product multiplies is the same value (an
// extension is exact, and the body extends exactly as the producer did); the
// ops of the body are unchanged.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/Utils/Gemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>

namespace mlir::ga {
#define GEN_PASS_DEF_NARROWPRODUCTOPERANDS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The narrow tensor that `value` extends exactly: `value` is the result of
/// a linalg op on tensors with one input and one init of the same shape,
/// identity maps, parallel loops only, whose body yields `arith.extf` of the
/// input.
std::optional<Value> getExtensionSource(Value value) {
  auto op = value.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return std::nullopt;
  OpOperand *input = op.getDpsInputOperand(0);
  Block *body = op.getBlock();
  auto ext = dyn_cast<arith::ExtFOp>(body->front());
  if (!ext || body->getOperations().size() != 2 ||
      ext.getIn() != op.getMatchingBlockArgument(input) ||
      body->getTerminator()->getOperand(0) != ext.getResult())
    return std::nullopt;
  return input->get();
}

/// A value as the exact extension of a narrow tensor moved by layout ops:
/// `source` through `layout` (linalg.transpose, tensor.collapse_shape,
/// tensor.expand_shape; in program order), then extended.
struct ExtendedLayout {
  Value source;
  SmallVector<Operation *> layout;
};

std::optional<ExtendedLayout> traceExtension(Value value) {
  SmallVector<Operation *> layout;
  while (true) {
    if (std::optional<Value> source = getExtensionSource(value)) {
      std::reverse(layout.begin(), layout.end());
      return ExtendedLayout{*source, layout};
    }
    Operation *def = value.getDefiningOp();
    if (std::optional<Permutation> permutation = asPermutation(value))
      value = permutation->source;
    else if (auto c = dyn_cast_or_null<tensor::CollapseShapeOp>(def))
      value = c.getSrc();
    else if (auto e = dyn_cast_or_null<tensor::ExpandShapeOp>(def))
      value = e.getSrc();
    else
      return std::nullopt;
    layout.push_back(def);
  }
}

/// The layout ops of `chain` applied to its narrow source: the narrow value
/// whose extension the traced value is. The original ops stay for their
/// other users (or are erased as dead).
Value replayOnNarrow(OpBuilder &b, const ExtendedLayout &chain) {
  Value value = chain.source;
  Type element = getElementTypeOrSelf(value.getType());
  for (Operation *op : chain.layout) {
    Location loc = op->getLoc();
    auto narrowType =
        cast<RankedTensorType>(op->getResult(0).getType()).clone(element);
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
      value = tensor::CollapseShapeOp::create(b, loc, narrowType, value,
                                              c.getReassociationIndices());
    } else if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
      value = tensor::ExpandShapeOp::create(b, loc, narrowType, value,
                                            e.getReassociationIndices(),
                                            e.getMixedOutputShape());
    } else {
      // A permutation (linalg.transpose or its generic form): the same
      // move on the narrow tensor.
      AffineMap permute = asPermutation(op->getResult(0))->permute;
      Value init = tensor::EmptyOp::create(
          b, loc, tensor::getMixedSizes(b, loc, op->getResult(0)), element);
      SmallVector<AffineMap> maps = {
          permute, b.getMultiDimIdentityMap(narrowType.getRank())};
      SmallVector<utils::IteratorType> iterators(narrowType.getRank(),
                                                 utils::IteratorType::parallel);
      value = linalg::GenericOp::create(
                  b, loc, narrowType, ValueRange{value}, ValueRange{init}, maps,
                  iterators,
                  [](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(nb, nl, args[0]);
                  })
                  .getResult(0);
    }
  }
  return value;
}

/// A contraction on tensors whose every input extends one narrower type
/// (to its init's element type) reads the narrow inputs; its body extends
/// them where it read the extended ones.
struct NarrowContraction : OpInterfaceRewritePattern<linalg::LinalgOp> {
  NarrowContraction(MLIRContext *context, int64_t &counter)
      : OpInterfaceRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumDpsInputs() == 0 || !linalg::isaContractionOpInterface(op))
      return failure();
    Type wide = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
    SmallVector<ExtendedLayout> chains;
    for (OpOperand *input : op.getDpsInputOperands()) {
      std::optional<ExtendedLayout> chain = traceExtension(input->get());
      if (!chain || getElementTypeOrSelf(input->get().getType()) != wide ||
          (!chains.empty() &&
           getElementTypeOrSelf(chain->source.getType()) !=
               getElementTypeOrSelf(chains[0].source.getType())))
        return failure();
      chains.push_back(*chain);
    }
    SmallVector<Value> narrow;
    for (const ExtendedLayout &chain : chains)
      narrow.push_back(replayOnNarrow(rewriter, chain));
    linalg::GenericOp generic;
    if (auto g = dyn_cast<linalg::GenericOp>(op.getOperation())) {
      generic = g;
    } else {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return failure();
      generic = *generalized;
    }
    Block *body = generic.getBlock();
    rewriter.modifyOpInPlace(generic, [&] {
      OpBuilder b = OpBuilder::atBlockBegin(body);
      for (auto [i, source] : llvm::enumerate(narrow)) {
        generic.setOperand(i, source);
        BlockArgument arg = body->getArgument(i);
        Type argType = arg.getType();
        arg.setType(getElementTypeOrSelf(source.getType()));
        Value ext = arith::ExtFOp::create(b, generic.getLoc(), argType, arg);
        arg.replaceAllUsesExcept(ext, ext.getDefiningOp());
      }
    });
    ++counter;
    return success();
  }

  int64_t &counter;
};

struct NarrowProductOperandsPass
    : ga::impl::NarrowProductOperandsBase<NarrowProductOperandsPass> {
  void runOnOperation() override {
    int64_t narrowed = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<NarrowContraction>(&getContext(), narrowed);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numNarrowed += narrowed;
  }
};

} // namespace
