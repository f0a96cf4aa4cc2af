//===- BatchGrouped.cpp - the batch model of ga.grouped_matmul ------------===//
//
// A grouped product is per row: each row of `lhs` meets the matrix of the
// group its position falls in. When the rows are per-sample in order (along
// dimension 0) and neither the matrices nor the group ends are, a
// micro-batch's rows are rows [a, a + m) of the batch; with the ends shifted
// by -a (and clamped by the op) every row of it falls in the group it falls
// in for the whole batch, so the micro-batch computes the batch's rows
// exactly. Ends computed from the whole batch (a reduced value) are read
// after the loop that computes them, as any statistic is. With group_ids the
// group of each row is data beside the row: per-sample with the rows, the
// micro-batch's rows take their own ids and nothing is shifted.
//
// The weights' gradient (`transpose_lhs`) sums over the rows: over the batch
// when the rows are per-sample. It is a reduction with the combiner `add`
// into its init (the op is `init + sum`), so the rewrite accumulates it as it
// accumulates a linalg reduction: each micro-batch's op starts from the
// neutral element (or the accumulator) and a ga.accumulate adds it up.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/IR/Diagnostics.h"
#include "ga/IR/GADialect.h"
#include "ga/IR/GAGroupedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ga;

/// Whether the groups of `op` agree with rows that are per-sample along
/// dimension 0 with `factor` rows per sample: ends that are not per-sample,
/// or with group_ids, ids per-sample with the rows (refuses otherwise).
static bool checkGroups(BatchTransfer &t, GroupedMatmulOp op, int64_t factor) {
  BatchClass groups = t.getClass(op.getEnds());
  if (!op.getGroupIds()) {
    if (!groups.isBatched())
      return true;
    t.error(op) << DiagnosticCode::BatchCoupling
                << "a grouped product whose group ends are per-sample: a "
                   "micro-batch cannot tell which of them its rows meet";
    return false;
  }
  if (groups.isBatched() && groups.dim == 0 && groups.factor == factor)
    return true;
  t.error(op) << DiagnosticCode::BatchDimensionMoved
              << "a grouped product by group ids needs one id per row, "
                 "per-sample with its rows (dimension 0, "
              << factor << " per sample)";
  return false;
}

/// The weights' gradient: a reduction over the per-sample rows of both
/// operands (see the file comment).
static void transferWeightGradient(BatchTransfer &t, GroupedMatmulOp op) {
  BatchClass lhs = t.getClass(op.getLhs()), rhs = t.getClass(op.getRhs());
  BatchClass init = t.getClass(op.getInit());
  int64_t factor = lhs.isBatched() ? lhs.factor : rhs.factor;
  for (const BatchClass &rows : {lhs, rhs}) {
    if (rows.isBatched() && (rows.dim != 0 || rows.factor != factor)) {
      t.error(op) << DiagnosticCode::BatchDimensionMoved
                  << "the weights' gradient of a grouped product is a sum "
                     "over the batch along its rows (dimension 0 of both "
                     "operands) only";
      return;
    }
  }
  if (init.isBatched()) {
    t.error(op) << DiagnosticCode::BatchCoupling
                << "a grouped product whose init is per-sample: a "
                   "micro-batch cannot tell which of them its rows meet";
    return;
  }
  if (!checkGroups(t, op, factor))
    return;
  if (!isa<func::FuncOp>(op->getParentOp())) {
    t.error(op) << DiagnosticCode::ControlFlow
                << "the weights' gradient of a grouped product sums over the "
                   "batch inside a region: reduce at the top level of the "
                   "step";
    return;
  }
  // Accumulating into a sum over the batch is a chain, not a coupling.
  bool chained = init.kind == BatchClass::Kind::Reduced && init.combiner &&
                 *init.combiner == vector::CombiningKind::ADD;
  SmallVector<Value> coupled = {op.getLhs(), op.getRhs(), op.getEnds()};
  if (!chained)
    coupled.push_back(op.getInit());
  BatchClass cls;
  cls.kind = BatchClass::Kind::Reduced;
  cls.combiner = vector::CombiningKind::ADD;
  cls.level = std::max(t.checkCoupling(coupled), chained ? init.level : 0u);
  cls.dependsOnParams = t.joinInputs(getOpInputs(op)).dependsOnParams;
  cls.origin = op;
  t.setResults(cls);
  PerSampleOpInfo info;
  info.factor = factor;
  info.reducesBatch = true;
  info.hasNamedCombiners = true;
  t.setPerSample(info);
}

/// The transfer function of ga.grouped_matmul (see the file comment).
static void transferGroupedMatmul(BatchTransfer &t, GroupedMatmulOp op) {
  SmallVector<Value> inputs = getOpInputs(op);
  BatchClass lhs = t.getClass(op.getLhs()), rhs = t.getClass(op.getRhs());
  BatchClass init = t.getClass(op.getInit());
  if (op.getTransposeLhs())
    return transferWeightGradient(t, op);
  // Per-sample ends are refused whatever the rows are.
  if (!op.getGroupIds() && !checkGroups(t, op, lhs.factor))
    return;
  if (rhs.isBatched()) {
    t.error(op) << DiagnosticCode::BatchCoupling
                << "a grouped product whose matrices are per-sample: a "
                   "micro-batch cannot tell which of them its rows meet";
    return;
  }
  if (!lhs.isBatched() || lhs.dim != 0 ||
      (init.isBatched() && (init.dim != 0 || init.factor != lhs.factor))) {
    t.error(op) << DiagnosticCode::BatchDimensionMoved
                << "a grouped product is per sample along its rows "
                   "(dimension 0 of lhs and of the result) only";
    return;
  }
  if (op.getGroupIds() && !checkGroups(t, op, lhs.factor))
    return;
  BatchClass cls = BatchClass::getBatched(0, lhs.factor);
  cls.level = std::max(
      {t.checkCoupling(inputs), lhs.level, init.isBatched() ? init.level : 0u});
  cls.dependsOnParams = t.joinInputs(inputs).dependsOnParams;
  t.setResults(cls);
  // The micro-batch's rows: `factor` rows per sample, which also sizes the
  // init's tile and the shift of the group ends.
  PerSampleOpInfo info;
  info.factor = lhs.factor;
  t.setPerSample(info);
}

namespace {
struct GroupedMatmulModel
    : BatchTransferOpInterface::ExternalModel<GroupedMatmulModel,
                                              GroupedMatmulOp> {
  void transferBatch(Operation *op, BatchTransfer &t) const {
    transferGroupedMatmul(t, cast<GroupedMatmulOp>(op));
  }
  /// The micro-batch's rows with the group ends shifted by the position of
  /// its first row (the op clamps them to its rows).
  Operation *materializeAtMicroBatch(Operation *op,
                                     MicroBatchBuilder &b) const {
    auto grouped = cast<GroupedMatmulOp>(op);
    OpBuilder &builder = b.getBuilder();
    Location loc = op->getLoc();
    int64_t factor = b.getAnalysis().getOpInfo(op)->factor;
    if (grouped.getGroupIds())
      return createAt(b, grouped, factor,
                      b.getAlong(grouped.getEnds(), 0, factor));
    Value ends = b.getUniform(grouped.getEnds());
    auto endsType = cast<RankedTensorType>(ends.getType());
    Value first = b.getMicroOffset(factor);
    if (!endsType.getElementType().isIndex())
      first = arith::IndexCastOp::create(builder, loc,
                                         endsType.getElementType(), first);
    Value shift = tensor::SplatOp::create(builder, loc, first, endsType);
    Value shifted = arith::SubIOp::create(builder, loc, ends, shift);
    return createAt(b, grouped, factor, shifted);
  }

  /// The op on the micro-batch's rows with the groups `groups`.
  static Operation *createAt(MicroBatchBuilder &b, GroupedMatmulOp grouped,
                             int64_t factor, Value groups) {
    Value lhs = b.getAlong(grouped.getLhs(), 0, factor);
    Value rhs = grouped.getTransposeLhs()
                    ? b.getAlong(grouped.getRhs(), 0, factor)
                    : b.getUniform(grouped.getRhs());
    // The weights' gradient starts from the accumulator the rewrite gives.
    Value init = b.getOverride(grouped.getInitMutable());
    if (!init)
      init = grouped.getTransposeLhs()
                 ? b.getUniform(grouped.getInit())
                 : b.getAlong(grouped.getInit(), 0, factor);
    return GroupedMatmulOp::create(
        b.getBuilder(), grouped.getLoc(), init.getType(), lhs, rhs, groups,
        init, grouped.getTransposeLhs(), grouped.getGroupIds());
  }
};
} // namespace

void mlir::ga::registerGroupedBatchModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GADialect *) {
    GroupedMatmulOp::attachInterface<GroupedMatmulModel>(*ctx);
  });
}
