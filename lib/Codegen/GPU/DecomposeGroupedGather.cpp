//===- DecomposeGroupedGather.cpp - grouped products as gathers -----------===//
//
// --ga-decompose-grouped-gather: ga.grouped_matmul as linalg.generic ops with
// static iteration spaces whose bodies gather the row's group matrix with
// tensor.extract, so that the GPU loop mapping makes kernels of them (the
// CPU's scf.for over groups would be a host loop reading device data).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GAGroupedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_DECOMPOSEGROUPEDGATHER
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// `value` (any integer or index) as i64.
Value toI64(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  if (value.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, i64, value);
  if (value.getType().getIntOrFloatBitWidth() < 64)
    return arith::ExtSIOp::create(b, loc, i64, value);
  if (value.getType().getIntOrFloatBitWidth() > 64)
    return arith::TruncIOp::create(b, loc, i64, value);
  return value;
}

/// The group of each row of `op` (i64): with group_ids the ids as i64 (the
/// products test their range), with group ends `min over g of (ends[g] > r ?
/// g : E)`. The op clamps its ends to [0, M] and makes a group whose end is
/// below the previous one empty: row r (< M) is then in the first group whose
/// raw end exceeds r, which clamping does not change, and in none past the
/// last end.
Value groupOfRows(OpBuilder &b, GroupedMatmulOp op) {
  Location loc = op.getLoc();
  Value ends = op.getEnds();
  Type i64 = b.getI64Type();
  SmallVector<OpFoldResult> rows = {
      tensor::getMixedSize(b, loc, op.getLhs(), 0)};
  Value empty = tensor::EmptyOp::create(b, loc, rows, i64);
  MLIRContext *ctx = b.getContext();
  if (op.getGroupIds()) {
    if (cast<RankedTensorType>(ends.getType()).getElementType() == i64)
      return ends;
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    return linalg::GenericOp::create(
               b, loc, empty.getType(), ValueRange{ends}, ValueRange{empty},
               ArrayRef<AffineMap>{id, id},
               ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 linalg::YieldOp::create(nb, nloc, toI64(nb, nloc, args[0]));
               })
        .getResult(0);
  }
  int64_t groups = op.getNumGroups();
  Value none = arith::ConstantIntOp::create(b, loc, i64, groups);
  Value init = linalg::FillOp::create(b, loc, none, empty).getResult(0);
  AffineExpr r, g;
  bindDims(ctx, r, g);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {g}, ctx),
                                 AffineMap::get(2, 0, {r}, ctx)};
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{ends}, ValueRange{init}, maps,
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value row =
                   toI64(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
               Value group =
                   toI64(nb, nloc, linalg::IndexOp::create(nb, nloc, 1));
               Value after =
                   arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sgt,
                                         toI64(nb, nloc, args[0]), row);
               Value candidate =
                   arith::SelectOp::create(nb, nloc, after, group, none);
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::MinSIOp::create(nb, nloc, args[1], candidate)
                       .getResult());
             })
      .getResult(0);
}

/// `acc + (take ? a * b : 0)` in the element type of `acc`.
Value addIf(OpBuilder &b, Location loc, Value take, Value a, Value c,
            Value acc) {
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(acc.getType()));
  Value product = arith::MulFOp::create(b, loc, a, c);
  Value term = arith::SelectOp::create(b, loc, take, product, zero);
  return arith::AddFOp::create(b, loc, acc, term);
}

/// The product: over (r, n, k), `init[r, n] + lhs[r, k] * rhs[g(r), k, n]`
/// for a row in a group (g(r) in [0, E)), zeros added otherwise.
Value product(OpBuilder &b, GroupedMatmulOp op, Value ids) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value rhs = op.getRhs();
  int64_t groups = op.getNumGroups();
  AffineExpr r, n, k;
  bindDims(ctx, r, n, k);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {r, k}, ctx),
                                 AffineMap::get(3, 0, {r}, ctx),
                                 AffineMap::get(3, 0, {r, n}, ctx)};
  auto par = utils::IteratorType::parallel;
  return linalg::GenericOp::create(
             b, loc, op.getInit().getType(), ValueRange{op.getLhs(), ids},
             ValueRange{op.getInit()}, maps,
             ArrayRef<utils::IteratorType>{par, par,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Type i64 = nb.getI64Type();
               Value zero = arith::ConstantIntOp::create(nb, nloc, i64, 0);
               Value count =
                   arith::ConstantIntOp::create(nb, nloc, i64, groups);
               Value g = args[1];
               Value in = arith::AndIOp::create(
                   nb, nloc,
                   arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, g,
                                         zero),
                   arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, g,
                                         count));
               // In bounds whatever the data: a row in no group reads the
               // first matrix and adds zero.
               Value safe = arith::IndexCastOp::create(
                   nb, nloc, nb.getIndexType(),
                   arith::SelectOp::create(nb, nloc, in, g, zero));
               Value w = tensor::ExtractOp::create(
                   nb, nloc, rhs,
                   ValueRange{safe, linalg::IndexOp::create(nb, nloc, 2),
                              linalg::IndexOp::create(nb, nloc, 1)});
               linalg::YieldOp::create(
                   nb, nloc, addIf(nb, nloc, in, args[0], w, args[2]));
             })
      .getResult(0);
}

/// The weights' gradient: over (g, k, n, r), `init[g, k, n] + (g(r) == g ?
/// lhs[r, k] * rhs[r, n] : 0)`.
Value weightsGradient(OpBuilder &b, GroupedMatmulOp op, Value ids) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  AffineExpr g, k, n, r;
  bindDims(ctx, g, k, n, r);
  SmallVector<AffineMap> maps = {
      AffineMap::get(4, 0, {r, k}, ctx), AffineMap::get(4, 0, {r, n}, ctx),
      AffineMap::get(4, 0, {r}, ctx), AffineMap::get(4, 0, {g, k, n}, ctx)};
  auto par = utils::IteratorType::parallel;
  return linalg::GenericOp::create(
             b, loc, op.getInit().getType(),
             ValueRange{op.getLhs(), op.getRhs(), ids},
             ValueRange{op.getInit()}, maps,
             ArrayRef<utils::IteratorType>{par, par, par,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value group =
                   toI64(nb, nloc, linalg::IndexOp::create(nb, nloc, 0));
               Value mine = arith::CmpIOp::create(
                   nb, nloc, arith::CmpIPredicate::eq, args[2], group);
               linalg::YieldOp::create(
                   nb, nloc, addIf(nb, nloc, mine, args[0], args[1], args[3]));
             })
      .getResult(0);
}

struct DecomposeGroupedGatherPass
    : public ga::impl::DecomposeGroupedGatherBase<DecomposeGroupedGatherPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<GroupedMatmulOp> ops;
    getOperation().walk([&](GroupedMatmulOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (GroupedMatmulOp op : ops) {
      rewriter.setInsertionPoint(op);
      Value ids = groupOfRows(rewriter, op);
      Value result = op.getTransposeLhs() ? weightsGradient(rewriter, op, ids)
                                          : product(rewriter, op, ids);
      rewriter.replaceOp(op, result);
      ++numDecomposed;
    }
  }
};

} // namespace
