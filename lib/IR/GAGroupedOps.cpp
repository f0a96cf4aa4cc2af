//===- GAGroupedOps.cpp - grouped products of the ga dialect --------------===//

#include "ga/IR/GAGroupedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ga;

/// Whether `a` and `b` may be equal (equal, or one of them dynamic).
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult GroupedMatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  RankedTensorType ends = getEnds().getType(), init = getInit().getType();
  if (getGroupIds()) {
    if (ends.getRank() != 1 || !ends.getElementType().isSignlessIntOrIndex() ||
        lhs.getRank() != 2 ||
        !compatible(ends.getDimSize(0), lhs.getDimSize(0)))
      return emitOpError("with group_ids, the groups must be a 1-d tensor of "
                         "integers, one per row of lhs, not ")
             << ends;
  } else if (ends.getRank() != 1 || !ends.hasStaticShape() ||
             !ends.getElementType().isSignlessIntOrIndex()) {
    return emitOpError("group ends must be a static 1-d tensor of integers, "
                       "not ")
           << ends;
  }
  Type elt = init.getElementType();
  if (!isa<FloatType>(elt) || lhs.getElementType() != elt ||
      rhs.getElementType() != elt)
    return emitOpError("needs float operands of one element type");
  if (lhs.getRank() != 2)
    return emitOpError("lhs must be rows (M x K), not ") << lhs;
  // Only the rows may be dynamic (a micro-batch of a run-time size).
  int64_t m = lhs.getDimSize(0), k = lhs.getDimSize(1);
  RankedTensorType matrices = getTransposeLhs() ? init : rhs;
  if (getGroupIds() && matrices.getRank() != 3)
    return emitOpError("with group_ids, ")
           << (getTransposeLhs() ? "the result" : "rhs")
           << " must be a matrix per group, not " << matrices;
  int64_t e = getGroupIds() ? matrices.getDimSize(0) : ends.getDimSize(0);
  if (ShapedType::isDynamic(e))
    return emitOpError("needs a static number of groups");
  if (getTransposeLhs()) {
    if (rhs.getRank() != 2 || !compatible(rhs.getDimSize(0), m))
      return emitOpError("with transpose_lhs, rhs must have lhs's rows, not ")
             << rhs;
    if (!init.hasStaticShape() || k == ShapedType::kDynamic ||
        init.getShape() != ArrayRef<int64_t>{e, k, rhs.getDimSize(1)})
      return emitOpError("with transpose_lhs, the result must be ")
             << e << "x" << k << "x" << rhs.getDimSize(1)
             << " (groups x lhs columns x rhs columns), not " << init;
    return success();
  }
  if (!rhs.hasStaticShape() || rhs.getRank() != 3 || rhs.getDimSize(0) != e ||
      rhs.getDimSize(1) != k)
    return emitOpError("rhs must be ")
           << e << "x" << k << "xN (a matrix per group), not " << rhs;
  if (init.getRank() != 2 || !compatible(init.getDimSize(0), m) ||
      init.getDimSize(1) != rhs.getDimSize(2))
    return emitOpError("the result must be ")
           << m << "x" << rhs.getDimSize(2) << ", not " << init;
  return success();
}

/// `value` (an integer or index) as an index clamped to [zero, rows].
static Value clampRow(OpBuilder &b, Location loc, Value value, Value zero,
                      Value rows) {
  if (!value.getType().isIndex())
    value = arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
  value = arith::MaxSIOp::create(b, loc, value, zero);
  return arith::MinSIOp::create(b, loc, value, rows);
}

/// The matrix `index` of the 3-d `tensor` (rank-reduced to 2-d).
static Value matrixAt(OpBuilder &b, Location loc, Value tensor, Value index) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto matrix = RankedTensorType::get(type.getShape().drop_front(),
                                      type.getElementType());
  SmallVector<OpFoldResult> offsets = {index, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(1)),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, matrix, tensor, offsets, sizes,
                                        strides);
}

/// Rows [start, start + size) of the 2-d `tensor`.
static Value rowsAt(OpBuilder &b, Location loc, Value tensor, Value start,
                    OpFoldResult size) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> offsets = {start, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {size, b.getIndexAttr(type.getDimSize(1))};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, tensor, offsets, sizes,
                                        strides);
}

/// `rows` inserted at rows [start, start + size) of the 2-d `into`.
static Value insertRows(OpBuilder &b, Location loc, Value rows, Value into,
                        Value start, OpFoldResult size) {
  int64_t columns = cast<RankedTensorType>(into.getType()).getDimSize(1);
  return tensor::InsertSliceOp::create(
      b, loc, rows, into, ArrayRef<OpFoldResult>{start, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{size, b.getIndexAttr(columns)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// `acc` with `lhsRows^T * rhsRows` added to its matrix `g` (a matmul with
/// a transposed lhs, which CBLAS takes).
static Value addToMatrix(OpBuilder &b, Location loc, Value lhsRows,
                         Value rhsRows, Value acc, Value g) {
  Value out = matrixAt(b, loc, acc, g);
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j, r;
  bindDims(ctx, i, j, r);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {r, i}, ctx),
                                 AffineMap::get(3, 0, {r, j}, ctx),
                                 AffineMap::get(3, 0, {i, j}, ctx)};
  auto matmul = linalg::MatmulOp::create(b, loc, ValueRange{lhsRows, rhsRows},
                                         ValueRange{out});
  matmul.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  auto type = cast<RankedTensorType>(acc.getType());
  SmallVector<OpFoldResult> offsets = {g, b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(1)),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, matmul.getResult(0), acc,
                                       offsets, sizes, strides);
}

/// `acc` with the product of group `g` for rows [start, start + size) of
/// `lhs` accumulated: those rows times the group's matrix into the same rows
/// of `acc`, or with `transposed` (the weights' gradient) those rows
/// transposed times the same rows of `rhs` into the group's matrix.
static Value accumulateGroup(OpBuilder &b, Location loc, bool transposed,
                             Value lhs, Value rhs, Value acc, Value g,
                             Value start, OpFoldResult size) {
  Value lhsRows = rowsAt(b, loc, lhs, start, size);
  if (transposed)
    return addToMatrix(b, loc, lhsRows, rowsAt(b, loc, rhs, start, size), acc,
                       g);
  Value out = rowsAt(b, loc, acc, start, size);
  Value product = linalg::MatmulOp::create(
                      b, loc, ValueRange{lhsRows, matrixAt(b, loc, rhs, g)},
                      ValueRange{out})
                      .getResult(0);
  return insertRows(b, loc, product, acc, start, size);
}

/// With group_ids: an scf.for over the rows, each row (a 1-row slice) times
/// the matrix of its group when the group is in range (the weights'
/// gradient: the row's outer product added to its group's matrix).
static Value decomposeByRow(OpBuilder &b, GroupedMatmulOp op) {
  Location loc = op.getLoc();
  bool transposed = op.getTransposeLhs();
  Value lhs = op.getLhs(), rhs = op.getRhs(), ids = op.getEnds();
  Value rows = tensor::DimOp::create(b, loc, lhs, 0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  Value groups = arith::ConstantIndexOp::create(b, loc, op.getNumGroups());
  auto loop = scf::ForOp::create(
      b, loc, zero, rows, step, ValueRange{op.getInit()},
      [&](OpBuilder &nb, Location nloc, Value r, ValueRange args) {
        Value acc = args[0];
        Value g = tensor::ExtractOp::create(nb, nloc, ids, r);
        if (!g.getType().isIndex())
          g = arith::IndexCastOp::create(nb, nloc, nb.getIndexType(), g);
        Value inRange = arith::AndIOp::create(
            nb, nloc,
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sge, g, zero),
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt, g,
                                  groups));
        auto ifOp = scf::IfOp::create(
            nb, nloc, inRange,
            [&](OpBuilder &tb, Location tloc) {
              Value next = accumulateGroup(tb, tloc, transposed, lhs, rhs, acc,
                                           g, r, tb.getIndexAttr(1));
              scf::YieldOp::create(tb, tloc, next);
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc, acc);
            });
        scf::YieldOp::create(nb, nloc, ifOp.getResult(0));
      });
  return loop.getResult(0);
}

/// One linalg.matmul per group in an scf.for over the groups: the group's
/// bounds read from `ends` (clamped, so that any data stays in bounds), its
/// rows and matrix sliced, the product accumulated into its slice of the
/// iteration argument. Upstream's matmul with a transposed lhs is the
/// weights' gradient; CBLAS takes both forms.
FailureOr<SmallVector<Value>>
GroupedMatmulOp::decomposeOperation(OpBuilder &b) {
  if (getGroupIds())
    return SmallVector<Value>{decomposeByRow(b, *this)};
  Location loc = getLoc();
  bool transposed = getTransposeLhs();
  Value lhs = getLhs(), rhs = getRhs(), ends = getEnds();
  Value rows = tensor::DimOp::create(b, loc, lhs, 0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value groups = arith::ConstantIndexOp::create(b, loc, getNumGroups());
  auto loop = scf::ForOp::create(
      b, loc, zero, groups, one, ValueRange{zero, getInit()},
      [&](OpBuilder &nb, Location nloc, Value g, ValueRange args) {
        // Groups are consecutive: this one starts where the last ended.
        Value start = args[0], acc = args[1];
        Value endRaw = tensor::ExtractOp::create(nb, nloc, ends, g);
        Value end = arith::MaxSIOp::create(
            nb, nloc, clampRow(nb, nloc, endRaw, zero, rows), start);
        Value size = arith::SubIOp::create(nb, nloc, end, start);
        Value next = accumulateGroup(nb, nloc, transposed, lhs, rhs, acc, g,
                                     start, size);
        scf::YieldOp::create(nb, nloc, ValueRange{end, next});
      });
  return SmallVector<Value>{loop.getResult(1)};
}

#define GET_OP_CLASSES
#include "ga/IR/GAGroupedOps.cpp.inc"
