//===- PerturbRoundings.cpp - Monte Carlo arithmetic on a step ------------===//
//
// Adds `@f_perturbed(args..., %seed)` beside each selected `@f`: every
// rounding op's result moves by a random fraction of up to `units` ulps,
// drawn by a counter-based hash of the seed, the op's number and the loop
// indices of the element, so that every element of every op (every partial
// sum of a reduction) gets its own draw and a run is reproducible.
//
//===----------------------------------------------------------------------===//

#include "ga/Transforms/Passes.h"

#include "ErrorBound/ErrorBound.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::ga {
#define GEN_PASS_DEF_PERTURBROUNDINGS
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::error_bound;

/// How many ulps the result of `op` may be off by, or 0 for an op that does
/// not round (max, select, negation, extf, ...) or is not a scalar float op.
static double getRoundingUnits(Operation *op) {
  if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
    return 0;
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
            arith::RemFOp, arith::TruncFOp, math::FmaOp, math::SqrtOp>(
          [](auto) { return 1.0; })
      .Case<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp, math::Log2Op,
            math::Log10Op, math::Log1pOp, math::TanhOp, math::SinOp,
            math::CosOp, math::TanOp, math::AtanOp, math::Atan2Op, math::ErfOp,
            math::ErfcOp, math::PowFOp, math::FPowIOp, math::RsqrtOp,
            math::CbrtOp, math::SinhOp, math::CoshOp, math::AsinOp,
            math::AcosOp, math::AsinhOp, math::AcoshOp, math::AtanhOp>(
          [](auto) { return 4.0; })
      .Default([](Operation *) { return 0.0; });
}

namespace {
/// Inserts the perturbations of one function.
class Perturber {
public:
  explicit Perturber(Value seed) : seed(seed) {}

  /// Perturbs the result of `op` (its `id`-th rounding op).
  void perturb(Operation *op, double units, uint64_t id);

private:
  /// The loop indices of the element `op` computes: the induction variables
  /// of the enclosing `scf.for` ops and the indices of the enclosing
  /// `linalg.generic` payloads, as i64.
  SmallVector<Value> getIndices(OpBuilder &b, Operation *op);
  /// The indices of the payload `block` (one `linalg.index` per loop, built
  /// once at its start).
  ArrayRef<Value> getPayloadIndices(Block *block, unsigned numLoops);

  Value seed;
  llvm::DenseMap<Block *, SmallVector<Value>> payloadIndices;
};
} // namespace

ArrayRef<Value> Perturber::getPayloadIndices(Block *block, unsigned numLoops) {
  auto [it, inserted] = payloadIndices.try_emplace(block);
  if (inserted) {
    OpBuilder b = OpBuilder::atBlockBegin(block);
    Location loc = block->getParentOp()->getLoc();
    for (unsigned d = 0; d < numLoops; ++d)
      it->second.push_back(arith::IndexCastOp::create(
          b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, d)));
  }
  return it->second;
}

SmallVector<Value> Perturber::getIndices(OpBuilder &b, Operation *op) {
  SmallVector<Value> indices;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      Value iv = loop.getInductionVar();
      indices.push_back(iv.getType().isIndex()
                            ? (Value)arith::IndexCastOp::create(
                                  b, op->getLoc(), b.getI64Type(), iv)
                            : iv);
    } else if (auto generic = dyn_cast<linalg::GenericOp>(parent)) {
      llvm::append_range(
          indices, getPayloadIndices(generic.getBody(), generic.getNumLoops()));
    }
  }
  return indices;
}

/// The splitmix64 finalizer: a bijection of i64 whose output bits all depend
/// on every input bit.
static Value mix(OpBuilder &b, Location loc, Value z) {
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                        static_cast<int64_t>(v));
  };
  auto step = [&](unsigned shift, uint64_t multiplier) {
    Value shifted = arith::ShRUIOp::create(b, loc, z, constant(shift));
    z = arith::XOrIOp::create(b, loc, z, shifted);
    if (multiplier)
      z = arith::MulIOp::create(b, loc, z, constant(multiplier));
  };
  step(30, 0xbf58476d1ce4e5b9ULL);
  step(27, 0x94d049bb133111ebULL);
  step(31, 0);
  return z;
}

void Perturber::perturb(Operation *op, double units, uint64_t id) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Location loc = op->getLoc();
  Value r = op->getResult(0);
  SmallVector<OpOperand *> uses =
      llvm::map_to_vector(r.getUses(), [](OpOperand &use) { return &use; });

  // xi uniform in [-1, 1): the top 53 bits of a hash of (seed, id, indices).
  constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  auto key = [&](Value h, Value k) {
    Value spread = arith::MulIOp::create(
        b, loc, k,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                     static_cast<int64_t>(kGolden)));
    return mix(b, loc, arith::XOrIOp::create(b, loc, h, spread));
  };
  Value h = key(seed, arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                                   static_cast<int64_t>(id)));
  for (Value index : getIndices(b, op))
    h = key(h, index);
  Value top = arith::ShRUIOp::create(
      b, loc, h, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 11));
  Type f64 = b.getF64Type();
  auto cst = [&](double v) {
    return arith::ConstantOp::create(b, loc, f64, b.getFloatAttr(f64, v));
  };
  Value unit = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, f64, top), cst(0x1.0p-52));
  Value xi = arith::SubFOp::create(b, loc, unit, cst(1));

  // r + xi * units * 2u |r|, in f64, rounded back to r's type.
  auto type = cast<FloatType>(r.getType());
  Value wide = type == f64 ? r : (Value)arith::ExtFOp::create(b, loc, f64, r);
  Value magnitude = math::AbsFOp::create(b, loc, wide);
  Value scale = cst(units * 2 * getUnitRoundoff(type));
  // sin and cos reduce their argument by multiples of pi: their error is
  // absolute, of the order of their range's ulp, near their zeros too.
  Value size = isa<math::SinOp, math::CosOp, math::TanOp>(op)
                   ? (Value)arith::MaximumFOp::create(b, loc, magnitude, cst(1))
                   : magnitude;
  Value delta = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, xi, scale), size);
  Value moved = arith::AddFOp::create(b, loc, wide, delta);
  if (type != f64)
    moved = arith::TruncFOp::create(b, loc, type, moved);
  // Infinities and NaN stay as they are.
  Value finite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, magnitude,
                            cst(std::numeric_limits<double>::infinity()));
  Value perturbed = arith::SelectOp::create(b, loc, finite, moved, r);
  for (OpOperand *use : uses)
    use->set(perturbed);
}

namespace {
struct PerturbRoundingsPass
    : public ga::impl::PerturbRoundingsBase<PerturbRoundingsPass> {
  using PerturbRoundingsBase::PerturbRoundingsBase;

  void runOnOperation() override {
    if (failed(forEachAnalysisCopy(getOperation(), funcNames, suffix,
                                   [&](func::FuncOp copy) {
                                     perturbRoundings(copy);
                                     return success();
                                   })))
      signalPassFailure();
  }

  /// Adds the seed argument to `copy`, a copy of the function, and perturbs
  /// each of its rounding ops.
  void perturbRoundings(func::FuncOp copy) {
    OpBuilder b(copy.getContext());
    (void)copy.insertArgument(copy.getNumArguments(), b.getI64Type(),
                              /*argAttrs=*/{}, copy.getLoc());
    Perturber perturber(copy.getArguments().back());
    SmallVector<std::pair<Operation *, double>> rounding;
    copy.walk([&](Operation *op) {
      if (double units = getRoundingUnits(op))
        rounding.push_back({op, units});
    });
    for (auto [id, entry] : llvm::enumerate(rounding))
      perturber.perturb(entry.first, entry.second, id);
    numPerturbed += rounding.size();
  }
};
} // namespace
