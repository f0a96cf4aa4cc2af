//===- ScalarRules.cpp - error bounds of arith and math ops ---------------===//
//
// One rule per scalar op: the bound of the result from the operands' values
// and bounds. Each rule bounds the error against real arithmetic to first
// order at least, and exactly where it is cheap (products keep e(a) e(b),
// quotients divide by |b| - e(b), powers take the derivative's largest value
// within the operand's interval). A rule that cannot bound its result (a
// division by a value whose bound reaches 0) gives +inf: the element is
// undetermined at this precision, which the comparison reports.
//
//===----------------------------------------------------------------------===//

#include "ErrorBound.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ga::error_bound;

/// Units of roundoff allowed for a library function (exp, log, tanh, ...):
/// 4 ulps, the largest error of the project's vectorized approximations
/// (test/Integration/CPU/math-approximations.test) and above libm's.
static constexpr double kLibraryUnits = 8;
/// Units of roundoff of sqrt: correctly rounded in IEEE, 1 ulp allowed.
static constexpr double kSqrtUnits = 2;

namespace {
/// Emits bound arithmetic in the companion type `bt` of one op. Null values
/// stand for an exact zero bound and emit nothing.
struct Emitter {
  OpBuilder &b;
  Location loc;
  FloatType bt;

  Value cst(double v) {
    return arith::ConstantOp::create(b, loc, bt, b.getFloatAttr(bt, v));
  }
  Value inf() { return cst(std::numeric_limits<double>::infinity()); }
  /// `v` (a float of any type) converted to the companion type.
  Value ext(Value v) {
    if (!v)
      return v;
    auto type = cast<FloatType>(v.getType());
    if (type == bt)
      return v;
    if (type.getWidth() < bt.getWidth())
      return arith::ExtFOp::create(b, loc, bt, v);
    return arith::TruncFOp::create(b, loc, bt, v);
  }
  Value abs(Value v) { return math::AbsFOp::create(b, loc, ext(v)); }
  /// `|v| * e`, nothing when `e` is (an exact operand's term).
  Value absTimes(Value v, Value e) { return e ? mul(abs(v), e) : Value(); }
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  /// A product of magnitudes and bounds, with 0 * inf = 0: an exact zero
  /// times anything is exact, and a NaN would poison every sum after it.
  Value mul(Value x, Value y) {
    if (!x || !y)
      return nullptr;
    Value p = arith::MulFOp::create(b, loc, x, y);
    return select(cmp(arith::CmpFPredicate::UNO, p, p), cst(0), p);
  }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value max(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    // NaN propagates: a NaN bound is an undetermined element.
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value min(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// `e == 0 ? 0 : f()`: a term that vanishes with the bound it scales, so
  /// that an infinite or undefined coefficient of an exact operand adds
  /// nothing.
  Value guarded(Value e, llvm::function_ref<Value()> f) {
    if (!e)
      return nullptr;
    Value zero = cst(0);
    return select(cmp(arith::CmpFPredicate::OEQ, e, zero), zero, f());
  }
  /// `x > 0 ? num / x : inf`.
  Value divOrInf(Value num, Value x) {
    return select(cmp(arith::CmpFPredicate::OGT, x, cst(0)), div(num, x),
                  inf());
  }
  /// The rounding of a result `r` of type `type`: `units * u * |r| + eta`,
  /// eta the smallest subnormal (an underflow's absolute error).
  Value rounding(Value r, FloatType type, double units, bool underflow) {
    // An infinite result (a -inf mask, say) is exact: inf arithmetic does
    // not round.
    Value magnitude = abs(r);
    Value finite = cmp(arith::CmpFPredicate::ONE, magnitude,
                       cst(std::numeric_limits<double>::infinity()));
    Value t = select(finite,
                     arith::MulFOp::create(
                         b, loc, cst(units * getUnitRoundoff(type)), magnitude),
                     cst(0));
    if (!underflow)
      return t;
    double eta =
        llvm::APFloat::getSmallest(type.getFloatSemantics()).convertToDouble();
    return add(t, cst(eta));
  }
};
} // namespace

/// The flag `x || y` (null when both are).
static Value orFlags(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x || !y)
    return x ? x : y;
  return arith::OrIOp::create(b, loc, x, y);
}

/// Bound of a power `a^p` where `p` is exact: the largest |derivative|
/// `|p| t^(p-1)` over the interval of `a` (t = |a| + e for p >= 1, else
/// |a| - e, infinite when that reaches 0), times e(a).
static Value powerBound(Emitter &em, Value a, Value ea, Value p) {
  return em.guarded(ea, [&] {
    Value absA = em.abs(a), pb = em.ext(p);
    Value pAtLeastOne = em.cmp(arith::CmpFPredicate::OGE, pb, em.cst(1));
    Value t = em.select(pAtLeastOne, em.add(absA, ea), em.sub(absA, ea));
    Value slope =
        em.mul(em.abs(pb),
               math::PowFOp::create(em.b, em.loc, t, em.sub(pb, em.cst(1))));
    Value ok =
        arith::OrIOp::create(em.b, em.loc, pAtLeastOne,
                             em.cmp(arith::CmpFPredicate::OGT, t, em.cst(0)));
    return em.select(ok, em.mul(slope, ea), em.inf());
  });
}

/// Bound of a logarithm of `x` (its argument's magnitude) with bound `ex`:
/// `|log(x') - log(x)| <= ex / (x - ex)`, divided by log(base).
static Value logBound(Emitter &em, Value x, Value ex, double invLogBase) {
  return em.guarded(ex, [&] {
    return em.mul(em.divOrInf(ex, em.sub(x, ex)), em.cst(invLogBase));
  });
}

/// Bound of a sum `acc + x` in a reduction of K terms: any order of the K
/// terms rounds each by at most K u |x| in total (the classic `gamma_K`
/// bound of a sum, spread over its terms).
///
/// The accumulator's initial value is one more term (a bias, a gradient
/// accumulated before): `u |acc|` per step covers its share, K u |init|
/// where the terms are small against it.
static Value reductionSum(Emitter &em, FloatType type, Value acc, Value eAcc,
                          Value ex, Value xMagnitude, Value numTerms) {
  Value k = em.ext(numTerms);
  Value u = em.cst(getUnitRoundoff(type));
  Value term = em.mul(em.mul(k, u), xMagnitude);
  Value init = em.mul(u, em.abs(acc));
  return em.add(em.add(eAcc, ex), em.add(term, init));
}

LogicalResult BoundBuilder::boundFlagOp(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  auto e = [&](Value v) { return lookup(v); };
  Value result = op->getResult(0);
  if (!getCompanionType(result.getType()))
    return success();
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    Value ea = e(cmp.getLhs()), eb = e(cmp.getRhs());
    auto p = cmp.getPredicate();
    if ((!ea && !eb) || p == arith::CmpFPredicate::ORD ||
        p == arith::CmpFPredicate::UNO ||
        p == arith::CmpFPredicate::AlwaysTrue ||
        p == arith::CmpFPredicate::AlwaysFalse)
      return success();
    Emitter em{b, loc,
               cast<FloatType>(getCompanionType(cmp.getLhs().getType()))};
    // The order of two values closer than their bounds may flip.
    Value gap = em.abs(em.sub(em.ext(cmp.getLhs()), em.ext(cmp.getRhs())));
    set(result,
        em.cmp(arith::CmpFPredicate::OLE, gap, em.add(em.ext(ea), em.ext(eb))));
    return success();
  }
  if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
    Value a = op->getOperand(0), ea = e(a);
    if (!ea)
      return success();
    Emitter em{b, loc, cast<FloatType>(ea.getType())};
    Value lo = math::TruncOp::create(b, loc, em.sub(em.ext(a), ea));
    Value hi = math::TruncOp::create(b, loc, em.add(em.ext(a), ea));
    set(result, em.cmp(arith::CmpFPredicate::ONE, lo, hi));
    return success();
  }
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    Value flag;
    if (Value ec = e(sel.getCondition())) {
      Value differ =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                sel.getTrueValue(), sel.getFalseValue());
      flag = arith::AndIOp::create(b, loc, ec, differ);
    }
    Value ex = e(sel.getTrueValue()), ey = e(sel.getFalseValue());
    if (ex || ey) {
      Value f = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
      flag = orFlags(b, loc, flag,
                     arith::SelectOp::create(b, loc, sel.getCondition(),
                                             ex ? ex : f, ey ? ey : f));
    }
    set(result, flag);
    return success();
  }
  if (isa<arith::BitcastOp>(op)) {
    if (e(op->getOperand(0)))
      return op->emitError("no error bound through a bitcast of an inexact "
                           "value");
    return success();
  }
  if (op->getDialect() != b.getContext()->getLoadedDialect("arith") &&
      !isa<math::IPowIOp, math::AbsIOp, math::CountLeadingZerosOp>(op))
    return op->emitError("no error-bound rule for '")
           << op->getName() << "' with inexact operands";
  Value flag;
  for (Value operand : op->getOperands())
    if (Value f = e(operand))
      flag = orFlags(b, loc, flag, f);
  set(result, flag);
  return success();
}

/// The bound of `op`'s result `r` if `op` is a basic operation (IEEE-rounded
/// arithmetic, conversions, exact selections); sets `handled`.
static Value boundBasicOp(Emitter &em, Operation *op, const BoundBuilder &bb,
                          const ReductionContext *reduction, bool &handled) {
  Value r = op->getResult(0), bound;
  auto type = cast<FloatType>(r.getType());
  auto e = [&](Value v) { return bb.lookup(v); };
  auto ce = [&](Value v) { return em.ext(e(v)); };
  auto isAcc = [&](Value v) {
    return reduction && reduction->accumulators.contains(v);
  };
  LogicalResult status =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case<arith::ConstantOp>([&](auto) { return success(); })
          .Case<arith::AddFOp, arith::SubFOp>([&](Operation *o) {
            Value a = o->getOperand(0), c = o->getOperand(1);
            if (isAcc(a) || (isa<arith::AddFOp>(o) && isAcc(c))) {
              Value x = isAcc(a) ? c : a, acc = isAcc(a) ? a : c;
              bound = reductionSum(em, type, acc, ce(acc), ce(x), em.abs(x),
                                   reduction->numTerms);
              return success();
            }
            bound =
                em.add(em.add(ce(a), ce(c)), em.rounding(r, type, 1, false));
            return success();
          })
          .Case<arith::MulFOp>([&](arith::MulFOp o) {
            Value ea = ce(o.getLhs()), eb = ce(o.getRhs());
            bound = em.add(em.add(em.absTimes(o.getLhs(), eb),
                                  em.absTimes(o.getRhs(), ea)),
                           em.mul(ea, eb));
            bound = em.add(bound, em.rounding(r, type, 1, true));
            return success();
          })
          .Case<math::FmaOp>([&](math::FmaOp o) {
            Value ea = ce(o.getA()), eb = ce(o.getB());
            Value product = em.add(
                em.add(em.absTimes(o.getA(), eb), em.absTimes(o.getB(), ea)),
                em.mul(ea, eb));
            if (isAcc(o.getC())) {
              Value magnitude = em.mul(em.abs(o.getA()), em.abs(o.getB()));
              bound = reductionSum(em, type, o.getC(), ce(o.getC()), product,
                                   magnitude, reduction->numTerms);
              return success();
            }
            bound = em.add(em.add(product, ce(o.getC())),
                           em.rounding(r, type, 1, true));
            return success();
          })
          .Case<arith::DivFOp>([&](arith::DivFOp o) {
            Value ea = ce(o.getLhs()), eb = ce(o.getRhs());
            if (ea || eb) {
              // |a'/b' - a/b| <= (e(a) + |r| e(b)) / (|b| - e(b)).
              Value num = em.add(ea, em.absTimes(r, eb));
              Value den =
                  eb ? em.sub(em.abs(o.getRhs()), eb) : em.abs(o.getRhs());
              bound = em.guarded(num, [&] { return em.divOrInf(num, den); });
            }
            bound = em.add(bound, em.rounding(r, type, 1, true));
            return success();
          })
          .Case<arith::NegFOp, math::AbsFOp, math::CopySignOp, arith::ExtFOp>(
              [&](Operation *o) {
                bound = ce(o->getOperand(0));
                return success();
              })
          .Case<arith::TruncFOp>([&](arith::TruncFOp o) {
            bound = em.add(ce(o.getIn()), em.rounding(r, type, 1, true));
            return success();
          })
          .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
                arith::MinNumFOp>([&](Operation *o) {
            // max and min are 1-Lipschitz in each operand.
            bound = em.max(ce(o->getOperand(0)), ce(o->getOperand(1)));
            return success();
          })
          .Case<arith::SIToFPOp, arith::UIToFPOp>([&](Operation *o) {
            bound = em.rounding(r, type, 1, false);
            if (Value flag = e(o->getOperand(0)))
              bound = em.select(flag, em.inf(), bound);
            return success();
          })
          .Case<arith::SelectOp>([&](arith::SelectOp o) {
            Value ex = ce(o.getTrueValue()), ey = ce(o.getFalseValue());
            if (ex || ey)
              bound = em.select(o.getCondition(), ex ? ex : em.cst(0),
                                ey ? ey : em.cst(0));
            if (Value flag = e(o.getCondition())) {
              // Either side may be taken.
              Value gap = em.abs(
                  em.sub(em.ext(o.getTrueValue()), em.ext(o.getFalseValue())));
              Value either = em.add(em.max(ex, ey), gap);
              bound = em.select(flag, either, bound ? bound : em.cst(0));
            }
            return success();
          })
          .Default([&](Operation *) { return failure(); });
  handled = succeeded(status);
  return bound;
}

/// The bound of `op`'s result `r` if `op` is a library function (sqrt, exp,
/// log, tanh, pow, ...) or a step function; sets `handled`.
static Value boundLibraryOp(Emitter &em, Operation *op, const BoundBuilder &bb,
                            bool &handled) {
  Value r = op->getResult(0), bound;
  auto type = cast<FloatType>(r.getType());
  auto e = [&](Value v) { return bb.lookup(v); };
  auto ce = [&](Value v) { return em.ext(e(v)); };
  OpBuilder &b = em.b;
  Location loc = em.loc;
  LogicalResult status =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case<math::SqrtOp>([&](math::SqrtOp o) {
            // |sqrt(a') - sqrt(a)| = |a' - a| / (sqrt(a') + sqrt(a))
            //                     <= e / max(sqrt(a), sqrt(e)).
            Value ea = ce(o.getOperand());
            bound = em.guarded(ea, [&] {
              Value den = em.max(em.abs(r), math::SqrtOp::create(b, loc, ea));
              return em.div(ea, den);
            });
            bound = em.add(bound, em.rounding(r, type, kSqrtUnits, false));
            return success();
          })
          .Case<math::RsqrtOp>([&](math::RsqrtOp o) {
            Value ea = ce(o.getOperand());
            bound = em.guarded(ea, [&] {
              Value s = math::SqrtOp::create(b, loc, em.abs(o.getOperand()));
              Value es =
                  em.div(ea, em.max(s, math::SqrtOp::create(b, loc, ea)));
              // |1/s' - 1/s| <= e(s) / (s (s - e(s))) = e(s) |r| / (s - e(s)).
              return em.divOrInf(em.mul(es, em.abs(r)), em.sub(s, es));
            });
            bound = em.add(bound, em.rounding(r, type, kLibraryUnits, true));
            return success();
          })
          .Case<math::ExpOp, math::Exp2Op, math::ExpM1Op>([&](Operation *o) {
            Value ea = ce(o->getOperand(0));
            if (ea) {
              Value scaled =
                  isa<math::Exp2Op>(o) ? em.mul(ea, em.cst(std::log(2.0))) : ea;
              Value growth = math::ExpM1Op::create(b, loc, scaled);
              Value base = isa<math::ExpM1Op>(o)
                               ? em.abs(em.add(em.ext(r), em.cst(1)))
                               : em.abs(r);
              bound = em.guarded(ea, [&] { return em.mul(base, growth); });
            }
            bound = em.add(bound, em.rounding(r, type, kLibraryUnits, true));
            return success();
          })
          .Case<math::LogOp, math::Log2Op, math::Log10Op, math::Log1pOp>(
              [&](Operation *o) {
                Value a = o->getOperand(0), ea = ce(a);
                Value x = isa<math::Log1pOp>(o)
                              ? em.abs(em.add(em.ext(a), em.cst(1)))
                              : em.abs(a);
                double inv = isa<math::Log2Op>(o)    ? 1 / std::log(2.0)
                             : isa<math::Log10Op>(o) ? 1 / std::log(10.0)
                                                     : 1.0;
                bound = em.add(logBound(em, x, ea, inv),
                               em.rounding(r, type, kLibraryUnits, true));
                return success();
              })
          .Case<math::TanhOp, math::SinOp, math::CosOp, math::ErfOp,
                math::ErfcOp, math::AtanOp>([&](Operation *o) {
            // Lipschitz: |tanh'|, |sin'|, |cos'|, |atan'| <= 1,
            // |erf'| <= 2/sqrt(pi); bounded functions move at most by their
            // range (2).
            double slope = isa<math::ErfOp, math::ErfcOp>(o) ? 1.1284 : 1.0;
            if (Value ea = ce(o->getOperand(0))) {
              bound = em.mul(ea, em.cst(slope));
              if (!isa<math::AtanOp>(o))
                bound = em.min(bound, em.cst(2));
            }
            bound = em.add(bound, em.rounding(r, type, kLibraryUnits, true));
            // sin and cos reduce their argument by multiples of pi: their
            // error is absolute, of the order of their range's ulp.
            if (isa<math::SinOp, math::CosOp>(o))
              bound =
                  em.add(bound, em.cst(kLibraryUnits * getUnitRoundoff(type)));
            return success();
          })
          .Case<math::PowFOp, math::FPowIOp>([&](Operation *o) {
            Value a = o->getOperand(0), p = o->getOperand(1);
            Value pf = isa<math::FPowIOp>(o)
                           ? arith::SIToFPOp::create(b, loc, em.bt, p)
                           : em.ext(p);
            bound = powerBound(em, a, ce(a), pf);
            if (Value ep = isa<math::PowFOp>(o) ? ce(p) : Value())
              bound = em.add(bound, em.guarded(ep, [&] {
                Value logA = math::LogOp::create(b, loc, em.abs(a));
                return em.mul(em.mul(em.abs(r), em.abs(logA)), ep);
              }));
            if (Value flag = isa<math::FPowIOp>(o) ? e(p) : Value())
              bound = em.select(flag, em.inf(), bound ? bound : em.cst(0));
            bound = em.add(bound, em.rounding(r, type, kLibraryUnits, true));
            return success();
          })
          .Case<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
                math::TruncOp>([&](Operation *o) {
            // A step function: any error may move the result by one.
            Value ea = ce(o->getOperand(0));
            bound = em.guarded(ea, [&] { return em.add(ea, em.cst(1)); });
            return success();
          })
          .Default([&](Operation *) { return failure(); });
  handled = succeeded(status);
  return bound;
}

LogicalResult BoundBuilder::boundScalarOp(OpBuilder &b, Operation *op,
                                          const ReductionContext *reduction) {
  // Integer and index results: flags, or nothing when the op is exact.
  if (op->getNumResults() == 1 && !isa<FloatType>(op->getResult(0).getType()))
    return boundFlagOp(b, op);
  if (op->getNumResults() != 1)
    return op->emitError("no error-bound rule for '") << op->getName() << "'";
  Value r = op->getResult(0);
  Emitter em{b, op->getLoc(), cast<FloatType>(getCompanionType(r.getType()))};
  bool handled = false;
  Value bound = boundBasicOp(em, op, *this, reduction, handled);
  if (!handled)
    bound = boundLibraryOp(em, op, *this, handled);
  if (!handled)
    return op->emitError("no error-bound rule for '") << op->getName() << "'";
  set(r, bound);
  if (bound)
    ++numBounded;
  return success();
}
