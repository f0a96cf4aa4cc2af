//===- DecomposeAttention.cpp - attention into linalg ops -----------------===//
//
// The decomposition of `ga.attention` and `ga.attention_backward` into
// `linalg.generic` ops on tensors, attached to both ops as their
// `linalg::AggregatedOpInterface` model, so that --ga-decompose-aggregated-ops
// lowers them on the CPU like linalg.softmax. It is the exact path: the
// scores of a whole (micro-)batch, [B, H, Tq, Tk], in the compute type (the
// type of the logsumexp), as `python/ga_mlir/torch/_attention.py` writes
// them in PyTorch; a micro-batch loop holds one micro-batch's scores.
//
// Every generic op of the decomposition iterates over a subset of the
// attention's loops (the maps restricted to it): the scores S over all
// loops but k1 and n, the products over all but n (S = Q K^T, dQ, dK) or all
// but k1 (O = P V, dV, dP), the row statistics over the logsumexp's loops.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/AttentionDecomposition.h"
#include "ga/IR/GAAttentionOps.h"
#include "ga/IR/GADialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Builds the linalg ops of one attention op. A tensor of the decomposition
/// is described by its loops (the attention loops that index its dimensions,
/// in order); a generic op by the loops it iterates over.
class AttentionBuilder {
public:
  using Loops = SmallVector<unsigned>;
  using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;

  template <typename OpTy>
  AttentionBuilder(OpBuilder &b, OpTy op)
      : b(b), loc(op.getLoc()), loops(op.getLoops()),
        maps(op.getIndexingMapsArray()), query(op.getQuery()), key(op.getKey()),
        value(op.getValue()), mask(op.getMask()),
        scale(op.getScale().convertToDouble()), causal(op.getCausal()) {
    element = getElementTypeOrSelf(query.getType());
    compute = getElementTypeOrSelf(op.getLogsumexp().getType());
    Loops all;
    for (unsigned loop = 0; loop < loops.getNumLoops(); ++loop)
      all.push_back(loop);
    withoutN = except(all, loops.n);
    withoutK1 = except(all, loops.k1);
    scoreLoops = except(withoutN, loops.k1);
    rowLoops = loopsOf(maps.back());
    // Sizes: every loop indexes query, key or value.
    sources = {{query, maps[0]}, {key, maps[1]}, {value, maps[2]}};
  }

  AffineMap queryMap() const { return maps[0]; }
  AffineMap keyMap() const { return maps[1]; }
  AffineMap valueMap() const { return maps[2]; }
  AffineMap outputMap() const { return maps[maps.size() - 2]; }

  /// The loops that index the dimensions of a tensor read through `map`
  /// (its plain results).
  static Loops loopsOf(AffineMap map) {
    Loops result;
    for (AffineExpr expr : map.getResults())
      result.push_back(cast<AffineDimExpr>(expr).getPosition());
    return result;
  }

  /// The scaled, masked scores S in the compute type, over `scoreLoops`.
  Value buildScores() {
    Value zero = filled(scoreLoops, 0.0);
    Value products =
        reduce(withoutN, {{query, queryMap()}, {key, keyMap()}}, zero,
               scoreLoops, [&](OpBuilder &b, Location loc, ValueRange args) {
                 Value p = arith::MulFOp::create(b, loc, ext(b, args[0]),
                                                 ext(b, args[1]));
                 return arith::AddFOp::create(b, loc, args[2], p).getResult();
               });
    SmallVector<std::pair<Value, AffineMap>> inputs = {
        {products, tensorMap(scoreLoops)}};
    if (mask)
      inputs.push_back({mask, maps[3]});
    unsigned queryIndex = position(scoreLoops, loops.queryPosition);
    unsigned keyIndex = position(scoreLoops, loops.k2);
    return reduce(
        scoreLoops, inputs, empty(scoreLoops), scoreLoops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value s = arith::MulFOp::create(b, loc, args[0], constant(b, scale));
          if (causal) {
            Value m = linalg::IndexOp::create(b, loc, queryIndex);
            Value k = linalg::IndexOp::create(b, loc, keyIndex);
            Value after =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, k, m);
            s = arith::SelectOp::create(b, loc, after, minusInfinity(b), s);
          }
          if (mask)
            s = arith::AddFOp::create(b, loc, s, ext(b, args[1]));
          return s;
        });
  }

  /// The logsumexp of the rows of `scores` over k2, as torch.logsumexp
  /// computes it: max + log(sum(exp(s - max))), the max taken as 0 where it
  /// is infinite (a row whose every key is masked gives -inf).
  Value buildLogsumexp(Value scores) {
    Value max = reduce(
        scoreLoops, {{scores, tensorMap(scoreLoops)}},
        filled(rowLoops, -INFINITY), rowLoops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return arith::MaxNumFOp::create(b, loc, args[1], args[0]).getResult();
        });
    Value sum =
        reduce(scoreLoops,
               {{scores, tensorMap(scoreLoops)}, {max, tensorMap(rowLoops)}},
               filled(rowLoops, 0.0), rowLoops,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 Value shifted = arith::SubFOp::create(
                     b, loc, args[0], finiteOrZero(b, args[1]));
                 Value e = math::ExpOp::create(b, loc, shifted);
                 return arith::AddFOp::create(b, loc, args[2], e).getResult();
               });
    return reduce(
        rowLoops, {{sum, tensorMap(rowLoops)}, {max, tensorMap(rowLoops)}},
        empty(rowLoops), rowLoops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value log = math::LogOp::create(b, loc, args[0]);
          return arith::AddFOp::create(b, loc, log, finiteOrZero(b, args[1]))
              .getResult();
        });
  }

  /// P = exp(S - lse), zero on the rows whose lse is -inf.
  Value buildProbabilities(Value scores, Value lse, AffineMap lseMap) {
    return reduce(
        scoreLoops, {{scores, tensorMap(scoreLoops)}, {lse, lseMap}},
        empty(scoreLoops), scoreLoops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              args[1], minusInfinity(b));
          Value safe =
              arith::SelectOp::create(b, loc, empty, constant(b, 0.0), args[1]);
          Value p = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, args[0], safe));
          return arith::SelectOp::create(b, loc, empty, constant(b, 0.0), p)
              .getResult();
        });
  }

  /// sum over the loops of `space` missing from `resultLoops` of
  /// `lhs * rhs` (each extended to the compute type), in the compute type.
  Value buildProduct(const Loops &space, std::pair<Value, AffineMap> lhs,
                     std::pair<Value, AffineMap> rhs,
                     const Loops &resultLoops) {
    return reduce(
        space, {lhs, rhs}, filled(resultLoops, 0.0), resultLoops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value p =
              arith::MulFOp::create(b, loc, ext(b, args[0]), ext(b, args[1]));
          return arith::AddFOp::create(b, loc, args[2], p).getResult();
        });
  }

  /// dS = P * (dP - rowsum(P * dP)), over `scoreLoops`.
  Value buildScoreGradient(Value p, Value dp, Value rowSum) {
    AffineMap scoreMap = tensorMap(scoreLoops);
    return reduce(
        scoreLoops,
        {{p, scoreMap}, {dp, scoreMap}, {rowSum, tensorMap(rowLoops)}},
        empty(scoreLoops), scoreLoops,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value d = arith::SubFOp::create(b, loc, args[1], args[2]);
          return arith::MulFOp::create(b, loc, args[0], d).getResult();
        });
  }

  /// `x * factor` (when `factor` is not 1) rounded to `type`'s elements.
  Value buildResult(Value x, const Loops &tensorLoops, Type type,
                    double factor = 1.0) {
    Type target = getElementTypeOrSelf(type);
    if (factor == 1.0 && target == compute)
      return x;
    return reduce(tensorLoops, {{x, tensorMap(tensorLoops)}},
                  empty(tensorLoops, target), tensorLoops,
                  [&](OpBuilder &b, Location loc, ValueRange args) {
                    Value v = args[0];
                    if (factor != 1.0)
                      v = arith::MulFOp::create(b, loc, v, constant(b, factor));
                    if (target != compute)
                      v = arith::TruncFOp::create(b, loc, target, v);
                    return v;
                  });
  }

  /// The map, over the tensor's own loops, of a tensor with `tensorLoops`.
  AffineMap tensorMap(const Loops &tensorLoops) const {
    SmallVector<AffineExpr> results;
    for (unsigned loop : tensorLoops)
      results.push_back(getAffineDimExpr(loop, b.getContext()));
    return AffineMap::get(loops.getNumLoops(), 0, results, b.getContext());
  }

  Loops withoutN, withoutK1, scoreLoops, rowLoops;
  Type element, compute;
  Value query, key, value, mask;

private:
  static Loops except(const Loops &loops, unsigned loop) {
    Loops result;
    for (unsigned l : loops)
      if (l != loop)
        result.push_back(l);
    return result;
  }
  static unsigned position(const Loops &space, unsigned loop) {
    return llvm::find(space, loop) - space.begin();
  }

  /// `map` (over all attention loops) over the loops of `space`.
  AffineMap restrict(AffineMap map, const Loops &space) const {
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        results.push_back(getAffineDimExpr(position(space, dim.getPosition()),
                                           b.getContext()));
      else
        results.push_back(expr);
    }
    return AffineMap::get(space.size(), 0, results, b.getContext());
  }

  /// The size of loop `loop`, from an operand that it indexes.
  OpFoldResult extent(unsigned loop) {
    for (auto [source, map] : sources) {
      std::optional<unsigned> dim =
          map.getResultPosition(getAffineDimExpr(loop, b.getContext()));
      if (!dim)
        continue;
      auto type = cast<RankedTensorType>(source.getType());
      if (!type.isDynamicDim(*dim))
        return b.getIndexAttr(type.getDimSize(*dim));
      return tensor::DimOp::create(b, loc, source, *dim).getResult();
    }
    llvm_unreachable("every attention loop indexes query, key or value");
  }

  Value empty(const Loops &tensorLoops, Type elementType = {}) {
    SmallVector<OpFoldResult> sizes;
    for (unsigned loop : tensorLoops)
      sizes.push_back(extent(loop));
    return tensor::EmptyOp::create(b, loc, sizes,
                                   elementType ? elementType : compute);
  }

  Value filled(const Loops &tensorLoops, double x) {
    Value init = empty(tensorLoops);
    Value c = constant(b, x);
    return linalg::FillOp::create(b, loc, c, init).getResult(0);
  }

  /// A linalg.generic over `space` reading `inputs` (each through its map
  /// over all attention loops) into `init` (a tensor with `initLoops`); the
  /// loops of `space` that `init` lacks are reductions.
  Value reduce(const Loops &space, ArrayRef<std::pair<Value, AffineMap>> inputs,
               Value init, const Loops &initLoops, Body body) {
    SmallVector<Value> operands;
    SmallVector<AffineMap> indexingMaps;
    for (auto [input, map] : inputs) {
      operands.push_back(input);
      indexingMaps.push_back(restrict(map, space));
    }
    indexingMaps.push_back(restrict(tensorMap(initLoops), space));
    SmallVector<utils::IteratorType> iterators;
    for (unsigned loop : space)
      iterators.push_back(llvm::is_contained(initLoops, loop)
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), operands, init, indexingMaps, iterators,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          Value result = body(nested, nestedLoc, args);
          linalg::YieldOp::create(nested, nestedLoc, result);
        });
    return generic.getResult(0);
  }

  Value constant(OpBuilder &b, double x) const {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, x));
  }
  Value minusInfinity(OpBuilder &b) const { return constant(b, -INFINITY); }
  /// `x` extended to the compute type.
  Value ext(OpBuilder &b, Value x) const {
    if (x.getType() == compute)
      return x;
    return arith::ExtFOp::create(b, loc, compute, x);
  }
  /// `x`, or 0 where it is infinite (torch.logsumexp's shift).
  Value finiteOrZero(OpBuilder &b, Value x) const {
    Value magnitude = math::AbsFOp::create(b, loc, x);
    Value infinite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           magnitude, constant(b, INFINITY));
    return arith::SelectOp::create(b, loc, infinite, constant(b, 0.0), x);
  }

  OpBuilder &b;
  Location loc;
  AttentionLoops loops;
  SmallVector<AffineMap> maps;
  double scale;
  bool causal;
  SmallVector<std::pair<Value, AffineMap>> sources;
};

struct AttentionDecomposition
    : linalg::AggregatedOpInterface::ExternalModel<AttentionDecomposition,
                                                   AttentionOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    auto attention = cast<AttentionOp>(op);
    AttentionBuilder a(b, attention);
    Value scores = a.buildScores();
    Value lse = a.buildLogsumexp(scores);
    Value p = a.buildProbabilities(scores, lse, a.tensorMap(a.rowLoops));
    Loops outputLoops = AttentionBuilder::loopsOf(a.outputMap());
    Value out = a.buildProduct(a.withoutK1, {p, a.tensorMap(a.scoreLoops)},
                               {a.value, a.valueMap()}, outputLoops);
    out = a.buildResult(out, outputLoops, attention.getOutput().getType());
    return SmallVector<Value>{out, lse};
  }
  using Loops = AttentionBuilder::Loops;
};

struct AttentionBackwardDecomposition
    : linalg::AggregatedOpInterface::ExternalModel<
          AttentionBackwardDecomposition, AttentionBackwardOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    auto backward = cast<AttentionBackwardOp>(op);
    AttentionBuilder a(b, backward);
    AffineMap scoreMap = a.tensorMap(a.scoreLoops);
    Value scores = a.buildScores();
    Value p = a.buildProbabilities(scores, backward.getLogsumexp(),
                                   backward.getLogsumexpMap());
    std::pair<Value, AffineMap> gradOutput = {backward.getGradOutput(),
                                              a.outputMap()};
    Loops valueLoops = AttentionBuilder::loopsOf(a.valueMap());
    Value dv =
        a.buildProduct(a.withoutK1, {p, scoreMap}, gradOutput, valueLoops);
    Value dp = a.buildProduct(a.withoutK1, gradOutput, {a.value, a.valueMap()},
                              a.scoreLoops);
    Value rowSum =
        a.buildProduct(a.scoreLoops, {p, scoreMap}, {dp, scoreMap}, a.rowLoops);
    Value ds = a.buildScoreGradient(p, dp, rowSum);
    Loops queryLoops = AttentionBuilder::loopsOf(a.queryMap());
    Loops keyLoops = AttentionBuilder::loopsOf(a.keyMap());
    Value dq = a.buildProduct(a.withoutN, {ds, scoreMap}, {a.key, a.keyMap()},
                              queryLoops);
    Value dk = a.buildProduct(a.withoutN, {ds, scoreMap},
                              {a.query, a.queryMap()}, keyLoops);
    double scale = backward.getScale().convertToDouble();
    return SmallVector<Value>{
        a.buildResult(dq, queryLoops, backward.getGradQuery().getType(), scale),
        a.buildResult(dk, keyLoops, backward.getGradKey().getType(), scale),
        a.buildResult(dv, valueLoops, backward.getGradValue().getType())};
  }
  using Loops = AttentionBuilder::Loops;
};

} // namespace

void mlir::ga::registerAttentionDecompositions(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GADialect *) {
    AttentionOp::attachInterface<AttentionDecomposition>(*ctx);
    AttentionBackwardOp::attachInterface<AttentionBackwardDecomposition>(*ctx);
  });
}
