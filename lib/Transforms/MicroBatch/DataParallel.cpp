//===- DataParallel.cpp - micro-batch loops over one rank's shard ---------===//
//
// The data-parallel form of the rewrite (`data-parallel=1`): the step as
// written is the step on the GLOBAL batch, the concatenation of the ranks'
// shards. Each rank runs the micro-batch loops over its own samples only
// and every reduction over the batch is combined across ranks after its
// loop. A rank is then nothing but a set of micro-batches of the global
// batch, so every exactness rule of the micro-batch rewrite carries over
// unchanged: normalizations by the batch size use the global size (the
// traced constant, or `tensor.dim` of the global argument), data-only
// statistics (token counts) are all-reduced between the statistics loop and
// the main loop, `linalg.index` along the batch is the global sample index.
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "ga/IR/Diagnostics.h"
#include "ga/IR/GAOps.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::micro_batch;

SmallVector<Segment> StepRewriter::buildShardSegments() {
  numMicroBatches = indexConstant(config.microBatches);
  // [begin, end) lies within the batch and holds at least N samples, so
  // that no micro-batch is empty.
  Value ordered = arith::CmpIOp::create(
      builder, loc(), arith::CmpIPredicate::ule, shardBegin, shardEnd);
  Value within = arith::CmpIOp::create(
      builder, loc(), arith::CmpIPredicate::ule, shardEnd, batchSize);
  Value local = arith::SubIOp::create(builder, loc(), shardEnd, shardBegin);
  Value enough = arith::CmpIOp::create(
      builder, loc(), arith::CmpIPredicate::uge, local, numMicroBatches);
  Value valid = arith::AndIOp::create(
      builder, loc(), arith::AndIOp::create(builder, loc(), ordered, within),
      enough);
  cf::AssertOp::create(builder, loc(), valid,
                       "ga: this rank's shard [begin, end) of the batch must "
                       "lie within the batch and hold at least as many "
                       "samples as there are micro-batches");
  quotient = arith::DivUIOp::create(builder, loc(), local, numMicroBatches);
  remainder = arith::RemUIOp::create(builder, loc(), local, numMicroBatches);
  return {Segment{numMicroBatches, 0, std::nullopt}};
}

/// The collective that combines partial results of `kind` across ranks.
static std::optional<CollectiveKind> toCollective(vector::CombiningKind kind) {
  switch (kind) {
  case vector::CombiningKind::ADD:
    return CollectiveKind::Sum;
  case vector::CombiningKind::MAXIMUMF:
  case vector::CombiningKind::MAXNUMF:
  case vector::CombiningKind::MAXSI:
    return CollectiveKind::Max;
  case vector::CombiningKind::MINIMUMF:
  case vector::CombiningKind::MINNUMF:
  case vector::CombiningKind::MINSI:
    return CollectiveKind::Min;
  default:
    return std::nullopt;
  }
}

FailureOr<Value> StepRewriter::combineAcrossRanks(const Accumulator &acc,
                                                  Value value) {
  if (acc.kind == Accumulator::Kind::Assemble) {
    Operation *def = acc.assembled.getDefiningOp();
    InFlightDiagnostic diag =
        (def ? def->emitError() : func.emitError())
        << DiagnosticCode::PerSampleResult
        << "data-parallel: the step returns this per-sample value, which no "
           "rank holds in full (each holds its shard of the batch); return "
           "a reduction over the batch instead";
    return diag;
  }
  std::optional<CollectiveKind> kind = acc.kind == Accumulator::Kind::Combine
                                           ? toCollective(acc.combiner)
                                           : std::nullopt;
  if (!kind) {
    return acc.reduction->emitError()
           << DiagnosticCode::UnsplittableReduction
           << "data-parallel: this reduction over the batch has no combiner "
              "that a collective applies (sum, max or min), so the ranks' "
              "partial results cannot be combined";
  }
  // One collective per accumulator, right after the loop; bucketing
  // (--ga-bucket-gradients) coalesces them.
  return AllReduceOp::create(builder, acc.reduction->getLoc(), *kind, value,
                             /*bucket=*/nullptr)
      .getResult();
}
