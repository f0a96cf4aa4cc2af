//===- Plan.cpp - planning the micro-batch loops --------------------------===//
//
// Which ops each loop level re-creates, and how the batch is cut into
// micro-batches (static sizes: one loop per size; dynamic: sizes per
// iteration).
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "llvm/ADT/SetVector.h"

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

bool StepRewriter::isLoadable(Operation *op) {
  // Only per-sample work that reads a statistic of an earlier loop (level
  // 2 or more) is stored: recomputing it in every later loop is what makes
  // the cost grow with the number of statistic levels (each level would
  // redo every earlier level's work). Work on the inputs alone (level 1) is
  // recomputed as before: it does not grow with the levels, and storing it
  // would hold full-batch copies of values that are cheap to redo. Stacked
  // batches are not contiguous micro-batch slices, so they are recomputed.
  if (!analysis.isPerSample(op) || op->getNumResults() == 0)
    return false;
  return llvm::all_of(op->getResults(), [&](Value result) {
    BatchClass cls = analysis.getClass(result);
    return isa<RankedTensorType>(result.getType()) && cls.isBatched() &&
           cls.stacks == 1 && cls.level >= 2;
  });
}

SmallVector<LevelPlan> StepRewriter::planLevels() {
  SmallVector<LevelPlan> plans(analysis.getNumLevels() + 1);
  for (unsigned level = 1; level <= analysis.getNumLevels(); ++level) {
    plans[level] = planLevel(level, plans);
    for (Operation *op : plans[level].local)
      computedAt.try_emplace(op, level);
  }
  return plans;
}

LevelPlan StepRewriter::planLevel(unsigned level,
                                  MutableArrayRef<LevelPlan> plans) {
  LevelPlan plan;
  Operation *terminator = body.getTerminator();
  // An op this loop needs: computed here, or loaded from the earlier loop
  // that computed it (which then stores its results).
  auto need = [&](Operation *op) {
    if (plan.local.count(op) || plan.loaded.count(op))
      return;
    auto earlier = computedAt.find(op);
    if (earlier == computedAt.end() || !isLoadable(op)) {
      plan.local.insert(op);
      return;
    }
    plan.loaded.insert(op);
    LevelPlan &producer = plans[earlier->second];
    for (Value result : op->getResults())
      if (!llvm::is_contained(producer.stored, result))
        producer.stored.push_back(result);
  };
  if (level == analysis.getNumLevels()) {
    for (Value result : terminator->getOperands())
      if (analysis.getClass(result).isBatched() && result.getDefiningOp() &&
          !llvm::is_contained(plan.assembled, result))
        plan.assembled.push_back(result);
  }
  DenseSet<Operation *> accumulated;
  for (Operation *op : originalOps) {
    if (analysis.getReductionLoop(op) != level)
      continue;
    if (analysis.isBatchReduction(op))
      plan.accumulated.push_back(op);
    else if (analysis.holdsBatchReductions(op))
      llvm::append_range(plan.accumulated, analysis.getNestedReductions(op));
    else
      continue;
    accumulated.insert(op);
  }

  // Walk backwards: an op is needed when a needed op or an accumulator uses
  // one of its per-sample results, or a statistic that is not available
  // before this loop (a ghost-batch statistic, recomputed locally). A loaded
  // op needs nothing of this loop.
  for (Value value : plan.assembled)
    need(value.getDefiningOp());
  for (Operation *op : llvm::reverse(originalOps)) {
    if (!plan.local.count(op) && !accumulated.count(op))
      continue;
    if (analysis.holdsBatchReductions(op)) {
      // The branches' work of this loop reads these values from above.
      for (Value input : getGuardedInputs(op)) {
        BatchClass cls = analysis.getClass(input);
        if (cls.isBatched() || (cls.isPostReduction() &&
                                analysis.getAvailableAfter(input) >= level))
          need(input.getDefiningOp());
      }
      continue;
    }
    SmallVector<Value> inputs = getOpInputs(op);
    bool isAccumulatorOnly = accumulated.count(op) && !plan.local.count(op);
    for (auto [index, input] : llvm::enumerate(inputs)) {
      Operation *def = input.getDefiningOp();
      if (!def)
        continue;
      // An accumulator's chained init is combined after the loop (the init
      // operand only: the same value read as an input is needed here).
      if (isAccumulatorOnly && index < op->getNumOperands() &&
          cast<DestinationStyleOpInterface>(op).isDpsInit(
              &op->getOpOperand(index)) &&
          !analysis.getClass(input).isBatched())
        continue;
      BatchClass cls = analysis.getClass(input);
      if (cls.isBatched() ||
          (cls.isPostReduction() && analysis.getAvailableAfter(input) >= level))
        need(def);
    }
  }
  return plan;
}

bool StepRewriter::isGuardedWork(Operation *op) {
  return analysis.isPerSample(op) ||
         llvm::none_of(op->getResults(), [&](Value result) {
           return analysis.getClass(result).isPostReduction();
         });
}

SmallVector<Value> StepRewriter::getGuardedInputs(Operation *regionOp) {
  llvm::SetVector<Value> inputs;
  for (Region &region : regionOp->getRegions()) {
    for (Operation &op : region.getOps()) {
      if (!isGuardedWork(&op))
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
      for (auto [index, input] : llvm::enumerate(getOpInputs(&op))) {
        // A reduction starts from the neutral element in the loop.
        if (analysis.isBatchReduction(&op) && index < op.getNumOperands() &&
            linalgOp.isDpsInit(&op.getOpOperand(index)))
          continue;
        if (input.getDefiningOp() &&
            !regionOp->isAncestor(input.getParentRegion()->getParentOp()))
          inputs.insert(input);
      }
    }
  }
  return inputs.takeVector();
}
