//===- Plan.cpp - planning the micro-batch loops --------------------------===//
//
// Which ops each loop level re-creates, and how the batch is cut into
// micro-batches (static sizes: one loop per size; dynamic: sizes per
// iteration).
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::micro_batch;

Value StepRewriter::getFullExtent(int64_t factor) {
  if (Value cached = fullExtents.lookup(factor))
    return cached;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfterValue(batchSize);
  Value extent = factor == 1 ? batchSize
                             : arith::MulIOp::create(builder, loc(), batchSize,
                                                     indexConstant(factor))
                                   .getResult();
  fullExtents[factor] = extent;
  return extent;
}

SmallVector<Segment> StepRewriter::buildSegments() {
  int64_t b = analysis.getBatchSize();
  int64_t n = config.microBatches;
  if (config.dataParallel)
    return buildShardSegments();
  if (!config.dynamicMicroBatches && !ShapedType::isDynamic(b)) {
    // Static shapes: sizes ceil(B/N) then floor(B/N), one loop each.
    int64_t q = b / n, r = b % n;
    SmallVector<Segment> segments;
    if (r)
      segments.push_back({indexConstant(r), 0, q + 1});
    segments.push_back({indexConstant(n - r), r * (q + 1), q});
    return segments;
  }
  // Run-time sizes: iteration i covers q + (i < r) samples from
  // i * q + min(i, r).
  numMicroBatches = config.dynamicMicroBatches ? func.getArguments().back()
                                               : indexConstant(n);
  if (config.dynamicMicroBatches) {
    Value positive =
        arith::CmpIOp::create(builder, loc(), arith::CmpIPredicate::sge,
                              numMicroBatches, indexConstant(1));
    cf::AssertOp::create(builder, loc(), positive,
                         "ga: the number of micro-batches must be at least 1");
  }
  quotient = arith::DivUIOp::create(builder, loc(), batchSize, numMicroBatches);
  remainder =
      arith::RemUIOp::create(builder, loc(), batchSize, numMicroBatches);
  return {Segment{numMicroBatches, 0, std::nullopt}};
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

LevelPlan StepRewriter::planLevel(unsigned level) {
  LevelPlan plan;
  Operation *terminator = body.getTerminator();
  if (level == analysis.getNumLevels()) {
    for (Value result : terminator->getOperands())
      if (analysis.getClass(result).isBatched() && result.getDefiningOp() &&
          !llvm::is_contained(plan.assembled, result))
        plan.assembled.push_back(result);
  }
  DenseSet<Operation *> accumulated;
  for (Operation *op : originalOps)
    if (analysis.isBatchReduction(op) &&
        analysis.getReductionLoop(op) == level) {
      plan.accumulated.push_back(op);
      accumulated.insert(op);
    }

  // Walk backwards: an op is needed when a needed op or an accumulator uses
  // one of its per-sample results, or a statistic that is not available
  // before this loop (a ghost-batch statistic, recomputed locally).
  for (Value value : plan.assembled)
    plan.local.insert(value.getDefiningOp());
  for (Operation *op : llvm::reverse(originalOps)) {
    if (!plan.local.count(op) && !accumulated.count(op))
      continue;
    SmallVector<Value> inputs = getOpInputs(op);
    bool isAccumulatorOnly = accumulated.count(op) && !plan.local.count(op);
    for (auto [index, input] : llvm::enumerate(inputs)) {
      Operation *def = input.getDefiningOp();
      if (!def)
        continue;
      // An accumulator's chained init is combined after the loop (the init
      // operand only: the same value read as an input is needed here).
      if (isAccumulatorOnly && index < op->getNumOperands() &&
          cast<linalg::LinalgOp>(op).isDpsInit(&op->getOpOperand(index)) &&
          !analysis.getClass(input).isBatched())
        continue;
      BatchClass cls = analysis.getClass(input);
      if (cls.isBatched() ||
          (cls.isPostReduction() && analysis.getAvailableAfter(input) >= level))
        plan.local.insert(def);
    }
  }
  return plan;
}
