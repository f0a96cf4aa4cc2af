//===- VectorizeMath.cpp - math functions on vectors without libm ---------===//
//
// --ga-vectorize-math: replaces math ops on f32 vectors (exp, erf, tanh, ...)
// by upstream's polynomial approximations, which are vector arithmetic.
// Lowered as they are, LLVM scalarizes each of them into one libm call per
// element.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::ga {
#define GEN_PASS_DEF_VECTORIZEMATH
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The math ops that upstream approximates by polynomials, by name without
/// the dialect.
constexpr StringLiteral kApproximable[] = {
    "acos", "asin",  "atan", "atan2", "cbrt", "cos", "erf", "erfc",
    "exp",  "expm1", "log",  "log1p", "log2", "sin", "tanh"};

/// What the pass approximates when `ops` is not given: the functions of
/// softmax, cross-entropy, GELU (exact and tanh), SiLU and their gradients.
/// Not log and log2: upstream's approximations treat a subnormal input as
/// the smallest normal number (log(1e-45) = -87.3 instead of -103.3).
constexpr StringLiteral kDefault[] = {"exp",  "expm1", "log1p",
                                      "tanh", "erf",   "erfc"};

/// Whether `op` is a math op on vectors of f32.
static bool isF32VectorMath(Operation *op) {
  if (op->getDialect() == nullptr ||
      op->getDialect()->getNamespace() !=
          math::MathDialect::getDialectNamespace() ||
      op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<VectorType>(op->getResult(0).getType());
  return type && type.getElementType().isF32();
}

struct VectorizeMathPass
    : public ga::impl::VectorizeMathBase<VectorizeMathPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    llvm::StringSet<> names;
    if (ops.empty())
      names.insert(std::begin(kDefault), std::end(kDefault));
    for (const std::string &name : ops) {
      if (!llvm::is_contained(kApproximable, name)) {
        std::string known;
        for (StringRef k : kApproximable)
          known += (known.empty() ? "" : ", ") + k.str();
        emitError(func.getLoc())
            << "ga-vectorize-math: no approximation of math op '" << name
            << "' (ops takes: " << known << ")";
        return signalPassFailure();
      }
      names.insert(name);
    }

    // Only vector ops: a scalar math op keeps its (correctly rounded or
    // nearly so) libm call, which costs the same as its approximation.
    SmallVector<Operation *> targets;
    func.walk([&](Operation *op) {
      if (isF32VectorMath(op) && names.contains(op->getName().stripDialect()))
        targets.push_back(op);
    });
    if (targets.empty())
      return;

    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [&](StringRef name) {
      return names.contains(name) ||
             (name.consume_front("math.") && names.contains(name));
    });
    GreedyRewriteConfig config;
    // Approximations written with other approximated ops (erfc through exp)
    // are rewritten too, but nothing else in the function is touched.
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    bool changed = false;
    if (failed(applyOpPatternsGreedily(targets, std::move(patterns), config,
                                       &changed))) {
      func.emitError("ga-vectorize-math: the approximation patterns did not "
                     "converge");
      return signalPassFailure();
    }
    // Count what is gone: ops the patterns did not take (an element type
    // they refuse) stay and are not counted.
    int64_t left = 0;
    func.walk([&](Operation *op) {
      if (isF32VectorMath(op) && names.contains(op->getName().stripDialect()))
        ++left;
    });
    numApproximated += targets.size() - left;
  }
};

} // namespace
