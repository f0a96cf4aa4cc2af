//===- ConvolutionRewrites.h - walk of the convolution passes ---*- C++ -*-===//
//
// What --ga-convolutions-to-products and --ga-unroll-convolution-windows
// share: each visits every convolution of a function once, rewrites the ones
// it takes, and leaves the others to the loop lowerings, counted and, when
// asked, with a remark saying why. Internal to lib/Codegen/Common.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_COMMON_CONVOLUTIONREWRITES_H
#define GA_LIB_CODEGEN_COMMON_CONVOLUTIONREWRITES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga::detail {

/// How many convolutions a pass rewrote and how many it left.
struct ConvolutionCounts {
  unsigned rewritten = 0;
  unsigned left = 0;
};

/// Calls `rewrite` on every op of `root` that
/// `linalg::isaConvolutionOpInterface` accepts (collected first, so that a
/// rewrite may replace the op). `rewrite` returns an empty string when it
/// rewrote the op, else why it left it; with `remarks`, each op left gets
/// the remark `leftMessage` followed by that reason.
template <typename RewriteFn>
ConvolutionCounts rewriteConvolutions(Operation *root, bool remarks,
                                      StringRef leftMessage,
                                      RewriteFn &&rewrite) {
  SmallVector<linalg::LinalgOp> convolutions;
  root->walk([&](linalg::LinalgOp op) {
    if (linalg::isaConvolutionOpInterface(op))
      convolutions.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  ConvolutionCounts counts;
  for (linalg::LinalgOp op : convolutions) {
    StringRef why = rewrite(rewriter, op);
    if (why.empty()) {
      ++counts.rewritten;
      continue;
    }
    // Left to the loop lowerings, which handle every convolution.
    ++counts.left;
    if (remarks)
      op->emitRemark(leftMessage) << why;
  }
  return counts;
}

} // namespace mlir::ga::detail

#endif // GA_LIB_CODEGEN_COMMON_CONVOLUTIONREWRITES_H
