//===- VectorizeMath.cpp - math functions on vectors without libm ---------===//
//
// --ga-vectorize-math: replaces math ops on f32 vectors (exp, erf, tanh, ...)
// by upstream's polynomial approximations, which are vector arithmetic.
// Lowered as they are, LLVM scalarizes each of them into one libm call per
// element. With `scalars`, f32 scalar ops too: one implementation per
// function in a step, whichever loops were vectorized.
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

/// Whether `op` is a math op on vectors of f32, or with `scalars` on f32.
static bool isF32Math(Operation *op, bool scalars) {
  if (op->getDialect() == nullptr ||
      op->getDialect()->getNamespace() !=
          math::MathDialect::getDialectNamespace() ||
      op->getNumResults() != 1)
    return false;
  Type type = op->getResult(0).getType();
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getElementType().isF32();
  return scalars && type.isF32();
}

/// tanh on f32 vectors through exp: upstream's rational approximation of
/// tanh is within 5 ulp but biased enough to double the float32 error of an
/// LSTM's AdamW step against float64 (the zoo's criterion,
/// torch-zoo-lstm-h_n.py). Here, as libm does it: |x| < 0.3 by the Taylor
/// series of tanh to x^15 (the next term is under 2^-27 of the result), else
/// 1 - 2 / (exp(2|x|) + 1) (at most 2.4x the error of exp: the subtraction
/// loses little where tanh >= 0.29), the sign of x copied. exp(2|x|)
/// overflows to +inf past 44, giving 1; NaN stays NaN.
struct TanhThroughExp : public OpRewritePattern<math::TanhOp> {
  TanhThroughExp(MLIRContext *context, bool scalars)
      : OpRewritePattern(context), scalars(scalars) {}

  LogicalResult matchAndRewrite(math::TanhOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF32Math(op, scalars))
      return failure();
    Location loc = op.getLoc();
    Type type = op.getType();
    auto cst = [&](double v) -> Value {
      FloatAttr value = rewriter.getF32FloatAttr(v);
      if (auto shaped = dyn_cast<ShapedType>(type))
        return arith::ConstantOp::create(rewriter, loc, type,
                                         SplatElementsAttr::get(shaped, value));
      return arith::ConstantOp::create(rewriter, loc, type, value);
    };
    Value x = op.getOperand();
    Value ax = math::AbsFOp::create(rewriter, loc, x);
    // Small: x + x^3 (c3 + x^2 (c5 + ...)), Horner in x^2.
    Value x2 = arith::MulFOp::create(rewriter, loc, x, x);
    const double coefficients[] = {-929569.0 / 638512875.0,
                                   21844.0 / 6081075.0,
                                   -1382.0 / 155925.0,
                                   62.0 / 2835.0,
                                   -17.0 / 315.0,
                                   2.0 / 15.0,
                                   -1.0 / 3.0};
    Value p = cst(coefficients[0]);
    for (double c : ArrayRef<double>(coefficients).drop_front())
      p = math::FmaOp::create(rewriter, loc, p, x2, cst(c));
    Value x3 = arith::MulFOp::create(rewriter, loc, x2, x);
    Value small = math::FmaOp::create(rewriter, loc, x3, p, x);
    // Large: 1 - 2 / (exp(2|x|) + 1), with the sign of x.
    Value e = math::ExpOp::create(rewriter, loc,
                                  arith::AddFOp::create(rewriter, loc, ax, ax));
    Value q = arith::DivFOp::create(
        rewriter, loc, cst(2.0),
        arith::AddFOp::create(rewriter, loc, e, cst(1.0)));
    Value large = math::CopySignOp::create(
        rewriter, loc, arith::SubFOp::create(rewriter, loc, cst(1.0), q), x);
    Value isSmall = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OLT, ax, cst(0.3));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isSmall, small, large);
    return success();
  }

private:
  bool scalars;
};

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

    // Vector ops; scalar ones only with `scalars`: otherwise a scalar math
    // op keeps its (correctly rounded or nearly so) libm call, which costs
    // the same as its approximation but rounds otherwise.
    auto isTarget = [&](Operation *op) {
      return isF32Math(op, scalars) &&
             names.contains(op->getName().stripDialect());
    };
    SmallVector<Operation *> targets;
    func.walk([&](Operation *op) {
      if (isTarget(op))
        targets.push_back(op);
    });
    if (targets.empty())
      return;

    RewritePatternSet patterns(&getContext());
    // tanh through exp (TanhThroughExp), whose exp is then approximated too.
    bool tanh = names.contains("tanh");
    populateMathPolynomialApproximationPatterns(patterns, [&](StringRef name) {
      name.consume_front("math.");
      return name != "tanh" &&
             (names.contains(name) || (tanh && name == "exp"));
    });
    if (tanh)
      patterns.add<TanhThroughExp>(&getContext(), scalars);
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
      if (isTarget(op))
        ++left;
    });
    numApproximated += targets.size() - left;
  }
};

} // namespace
