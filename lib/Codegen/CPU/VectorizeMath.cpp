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

/// A constant of `type` (f32 or a vector of f32, or i32 likewise) with
/// every element `v`.
static Value splat(PatternRewriter &rewriter, Location loc, Type type,
                   Attribute value) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(rewriter, loc, type,
                                     SplatElementsAttr::get(shaped, value));
  return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(value));
}

/// A rewrite of a math op on f32 vectors, or with `scalars` on f32 too
/// (isF32Math): `rewriteF32` replaces an op that qualifies.
template <typename OpTy> struct F32MathPattern : public OpRewritePattern<OpTy> {
  F32MathPattern(MLIRContext *context, bool scalars)
      : OpRewritePattern<OpTy>(context), scalars(scalars) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    if (!isF32Math(op, scalars))
      return failure();
    rewriteF32(op, rewriter);
    return success();
  }

  virtual void rewriteF32(OpTy op, PatternRewriter &rewriter) const = 0;

private:
  bool scalars;
};

/// tanh on f32 vectors through exp: upstream's rational approximation of
/// tanh is within 5 ulp but biased enough to double the float32 error of an
/// LSTM's AdamW step against float64 (the zoo's criterion,
/// torch-zoo-lstm-h_n.py). Here, as libm does it: |x| < 0.3 by the Taylor
/// series of tanh to x^15 (the next term is under 2^-27 of the result), else
/// 1 - 2 / (exp(2|x|) + 1) (at most 2.4x the error of exp: the subtraction
/// loses little where tanh >= 0.29), the sign of x copied. exp(2|x|)
/// overflows to +inf past 44, giving 1; NaN stays NaN.
struct TanhThroughExp : public F32MathPattern<math::TanhOp> {
  using F32MathPattern::F32MathPattern;

  void rewriteF32(math::TanhOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    auto cst = [&](double v) {
      return splat(rewriter, loc, type, rewriter.getF32FloatAttr(v));
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
  }
};

/// exp on f32 within 1 ulp (upstream's approximation is within 4): as a
/// scalar libm call is within 0.5, a step that computes exp in vectorized
/// loops and in scalar ones rounds the two alike only if both are this.
/// exp(x) = 2^k exp(r), k = x log2(e) rounded to nearest, r = x - k ln 2 by
/// two fmas against ln 2 split into a head with 12 trailing zero bits and a
/// tail (k ln2_hi is exact for |k| < 2^12), exp(r) by its Taylor series to
/// r^7 (|r| <= ln 2 / 2: the next term is under 0.12 ulp) as 1 + (r + r^2
/// q(r)), one rounding in the last addition. 2^k is applied as 2^(k >> 1)
/// times 2^(k - (k >> 1)), both normal floats, so a subnormal result is
/// rounded once. x is clamped to [-104, 89] first (exp is 0 below -103.98 and
/// overflows past 88.73, which the products still do); NaN is returned.
struct ExpThroughPowersOfTwo : public F32MathPattern<math::ExpOp> {
  using F32MathPattern::F32MathPattern;

  void rewriteF32(math::ExpOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    Type intType = rewriter.getI32Type();
    if (auto vector = dyn_cast<VectorType>(type))
      intType = vector.clone(intType);
    auto cst = [&](double v) {
      return splat(rewriter, loc, type, rewriter.getF32FloatAttr(v));
    };
    auto icst = [&](int32_t v) {
      return splat(rewriter, loc, intType, rewriter.getI32IntegerAttr(v));
    };
    Value x = op.getOperand();
    Value clamped = arith::MinNumFOp::create(
        rewriter, loc, arith::MaxNumFOp::create(rewriter, loc, x, cst(-104.0)),
        cst(89.0));
    Value k = math::RoundEvenOp::create(
        rewriter, loc,
        arith::MulFOp::create(rewriter, loc, clamped, cst(M_LOG2E)));
    // ln 2 = 0x1.62e4p-1 + 0x1.7f7d1cp-20 (to 2^-44).
    Value r = math::FmaOp::create(rewriter, loc, k, cst(-0x1.62e4p-1), clamped);
    r = math::FmaOp::create(rewriter, loc, k, cst(-0x1.7f7d1cp-20), r);
    Value q = cst(1.0 / 5040.0);
    for (double c : {1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5})
      q = math::FmaOp::create(rewriter, loc, q, r, cst(c));
    Value r2 = arith::MulFOp::create(rewriter, loc, r, r);
    Value p = arith::AddFOp::create(
        rewriter, loc, cst(1.0), math::FmaOp::create(rewriter, loc, r2, q, r));
    // 2^j as the float with biased exponent j + 127, for j in [-75, 64].
    Value ki = arith::FPToSIOp::create(rewriter, loc, intType, k);
    Value k1 = arith::ShRSIOp::create(rewriter, loc, ki, icst(1));
    Value k2 = arith::SubIOp::create(rewriter, loc, ki, k1);
    auto pow2 = [&](Value j) -> Value {
      Value bits = arith::ShLIOp::create(
          rewriter, loc, arith::AddIOp::create(rewriter, loc, j, icst(127)),
          icst(23));
      return arith::BitcastOp::create(rewriter, loc, type, bits);
    };
    Value y = arith::MulFOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, p, pow2(k1)),
        pow2(k2));
    Value isNaN =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isNaN, x, y);
  }
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
    // exp as ExpThroughPowersOfTwo, also where another approximation
    // (tanh, erfc, expm1) is written with it.
    bool exp =
        llvm::any_of(ArrayRef<StringRef>{"exp", "tanh", "erfc", "expm1"},
                     [&](StringRef name) { return names.contains(name); });
    populateMathPolynomialApproximationPatterns(patterns, [&](StringRef name) {
      name.consume_front("math.");
      return name != "tanh" && name != "exp" && names.contains(name);
    });
    if (tanh)
      patterns.add<TanhThroughExp>(&getContext(), scalars);
    if (exp)
      patterns.add<ExpThroughPowersOfTwo>(&getContext(), scalars);
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
