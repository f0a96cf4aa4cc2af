//===- IsolateLibraryProducts.cpp - library products before fusion --------===//
//
// --ga-isolate-library-products: on tensors, before element-wise fusion,
// marks every contraction that the library lowerings take (CBLAS on the CPU,
// cuBLASLt on the GPU) with `ga.library_product`, after absorbing the
// transposes that feed it into its indexing maps; --ga-fuse-elementwise then
// leaves marked ops whole.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"
#include "ga/Utils/Gemm.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_ISOLATELIBRARYPRODUCTS
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct IsolateLibraryProductsPass
    : public ga::impl::IsolateLibraryProductsBase<IsolateLibraryProductsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> products;
    WalkResult result = getOperation().walk([&](linalg::LinalgOp op) {
      bool marked = op->hasAttr(kLibraryProductAttrName);
      if (marked && !isLibraryProduct(op)) {
        op->emitOpError()
            << "is marked '" << kLibraryProductAttrName
            << "' but is not a matrix product that the library lowerings take "
               "(a multiply-add contraction of two operands with one M, N "
               "and K dimension and at most one outermost batch dimension)";
        return WalkResult::interrupt();
      }
      if (op.hasPureTensorSemantics() && isLibraryProduct(op))
        products.push_back(op);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp product : products) {
      product = absorbTransposes(rewriter, product);
      product->setAttr(kLibraryProductAttrName, rewriter.getUnitAttr());
      ++numProducts;
    }
  }

  /// Absorbs each transpose that feeds an input of `product` into the
  /// input's indexing map while the product keeps a library layout; returns
  /// the product (a linalg.generic once it absorbed one).
  linalg::LinalgOp absorbTransposes(RewriterBase &rewriter,
                                    linalg::LinalgOp product) {
    for (unsigned i = 0; i < 2; ++i) {
      while (true) {
        OpOperand *input = product.getDpsInputOperand(i);
        std::optional<Permutation> permutation = asPermutation(input->get());
        if (!permutation)
          break;
        SmallVector<AffineMap> maps = product.getIndexingMapsArray();
        maps[i] = permutation->permute.compose(maps[i]);
        if (!hasLibraryLayout(maps))
          break;
        Operation *transpose = input->get().getDefiningOp();
        auto generic = dyn_cast<linalg::GenericOp>(product.getOperation());
        if (!generic) {
          rewriter.setInsertionPoint(product);
          FailureOr<linalg::GenericOp> generalized =
              linalg::generalizeNamedOp(rewriter, product);
          if (failed(generalized))
            break;
          generic = *generalized;
        }
        rewriter.modifyOpInPlace(generic, [&] {
          generic->setOperand(i, permutation->source);
          generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
        });
        product = generic;
        ++numTransposes;
        if (transpose->use_empty())
          rewriter.eraseOp(transpose);
      }
    }
    return product;
  }
};

} // namespace
