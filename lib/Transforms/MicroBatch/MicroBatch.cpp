//===- MicroBatch.cpp - training step to micro-batch loop -----------------===//
//
// Rewrites a training step into loops over micro-batches, driven by the
// batch-dependence analysis:
//
//   uniform ops            stay where they are (they precede the loops);
//   per-sample ops         are re-created at micro-batch size in the body of
//                          every loop that needs them;
//   reductions over batch  become loop-carried accumulators (ga.accumulate);
//   post-reduction ops     move after the loop whose results they need.
//
// Loops are numbered by level: level L > 1 exists only when a data-only
// statistic (a token count) reduced in loop L-1 feeds per-sample math.
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "ga/IR/Diagnostics.h"
#include "ga/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"

namespace mlir::ga {
#define GEN_PASS_DEF_MICROBATCH
#include "ga/Transforms/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::micro_batch;

void StepRewriter::appendArguments() {
  if (config.dynamicMicroBatches)
    (void)func.insertArgument(func.getNumArguments(), builder.getIndexType(),
                              DictionaryAttr(), loc());
  if (config.dataParallel) {
    for (int i = 0; i < 2; ++i)
      (void)func.insertArgument(func.getNumArguments(), builder.getIndexType(),
                                DictionaryAttr(), loc());
    shardBegin = func.getArgument(func.getNumArguments() - 2);
    shardEnd = func.getArgument(func.getNumArguments() - 1);
  }
}

void StepRewriter::materializeBatchSizes() {
  builder.setInsertionPointToStart(&body);
  int64_t staticSize = analysis.getBatchSize();
  if (!ShapedType::isDynamic(staticSize)) {
    batchSize = indexConstant(staticSize);
  } else {
    BlockArgument arg = analysis.getBatchArgs().front();
    batchSize =
        tensor::DimOp::create(builder, loc(), arg, analysis.getClass(arg).dim);
  }
  // `tensor.dim` of the batch dimension is the full batch size wherever it is
  // used as a number; the loop bodies size tensors themselves. The other
  // dimensions of per-sample values are static (the analysis refuses dynamic
  // ones).
  // This holds in regions too (a mean normalized inside an scf.if).
  SmallVector<tensor::DimOp> dims;
  func.walk([&](tensor::DimOp dim) { dims.push_back(dim); });
  for (tensor::DimOp dim : dims) {
    if (dim.getResult() == batchSize ||
        !analysis.getClass(dim.getSource()).isBatched())
      continue;
    if (std::optional<int64_t> factor =
            analysis.getBatchExtentFactor(dim.getResult())) {
      dim.getResult().replaceAllUsesWith(getFullExtent(*factor));
    } else {
      int64_t index = *dim.getConstantIndex();
      dim.getResult().replaceAllUsesWith(indexConstant(
          cast<ShapedType>(dim.getSource().getType()).getDimSize(index)));
    }
    dim.erase();
  }
}

void StepRewriter::movePostReductionOps(unsigned level, Operation *terminator) {
  for (Operation *op : originalOps) {
    if (analysis.isPerSample(op))
      continue;
    bool post = llvm::any_of(op->getResults(), [&](Value v) {
      return analysis.getClass(v).isPostReduction();
    });
    unsigned after = 0;
    for (Value operand : op->getOperands())
      after = std::max(after, analysis.getAvailableAfter(operand));
    if (op->getNumResults())
      after = analysis.getAvailableAfter(op->getResult(0));
    // An scf.if that holds reductions follows their loop even without
    // results.
    if (analysis.holdsBatchReductions(op)) {
      post = true;
      after = std::max(after, analysis.getReductionLoop(op));
    }
    if ((post || after) && after == level)
      op->moveBefore(terminator);
  }
}

LogicalResult StepRewriter::eraseOriginalPerSampleOps() {
  SmallVector<Operation *> perSampleOps;
  for (Operation *op : originalOps) {
    if (!analysis.holdsBatchReductions(op)) {
      perSampleOps.push_back(op);
      continue;
    }
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        perSampleOps.push_back(&nested);
  }
  for (Operation *op : llvm::reverse(perSampleOps)) {
    if (!analysis.isPerSample(op))
      continue;
    if (!op->use_empty())
      return op->emitError() << "internal error: per-sample op still used "
                                "after the micro-batch rewrite";
    op->erase();
  }
  return success();
}

LogicalResult StepRewriter::run() {
  Operation *terminator = body.getTerminator();
  appendArguments();
  materializeBatchSizes();
  replaceDeadBranches();

  // Snapshot the original ops before anything moves.
  for (Operation &op : body.without_terminator())
    originalOps.push_back(&op);

  builder.setInsertionPoint(terminator);
  SmallVector<Segment> segments = buildSegments();
  // All levels are planned first: a later loop decides which values of an
  // earlier one are stored.
  SmallVector<LevelPlan> plans = planLevels();
  for (unsigned level = 1; level <= analysis.getNumLevels(); ++level) {
    const LevelPlan &plan = plans[level];
    if (!plan.accumulated.empty() || !plan.assembled.empty())
      emitLevel(level, plan, segments);
    if (failedDataParallel || failedMaterialize)
      return failure();
    movePostReductionOps(level, terminator);
  }
  return eraseOriginalPerSampleOps();
}

void StepRewriter::replaceDeadBranches() {
  SmallVector<scf::IfOp> ifs;
  func.walk([&](scf::IfOp ifOp) {
    if (!analysis.isPerSample(ifOp) && !analysis.isDead(ifOp->getBlock()))
      ifs.push_back(ifOp);
  });
  for (scf::IfOp ifOp : ifs) {
    for (Region &region : ifOp->getRegions()) {
      if (region.empty() || !analysis.isDead(&region.front()))
        continue;
      Region &live = ifOp->getRegion(1 - region.getRegionNumber());
      region.dropAllReferences();
      region.getBlocks().clear();
      if (live.empty()) {
        // A dead then-branch without else: an empty branch.
        scf::IfOp::ensureTerminator(region, builder, ifOp.getLoc());
        continue;
      }
      IRMapping mapping;
      live.cloneInto(&region, mapping);
    }
  }
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct MicroBatchPass : public ga::impl::MicroBatchBase<MicroBatchPass> {
  using MicroBatchBase::MicroBatchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StepRewriter::Config config;
    config.microBatches = microBatches;
    config.dynamicMicroBatches = dynamicMicroBatches;
    if (!dynamicMicroBatches && microBatches < 1) {
      emitError(module.getLoc())
          << "ga-micro-batch: micro-batches must be at least "
             "1, got "
          << static_cast<int64_t>(microBatches);
      return signalPassFailure();
    }
    if (!accumulatorType.empty()) {
      MLIRContext *ctx = &getContext();
      config.accumulatorType = llvm::StringSwitch<FloatType>(accumulatorType)
                                   .Case("f16", Float16Type::get(ctx))
                                   .Case("bf16", BFloat16Type::get(ctx))
                                   .Case("f32", Float32Type::get(ctx))
                                   .Case("f64", Float64Type::get(ctx))
                                   .Default(nullptr);
      if (!config.accumulatorType) {
        emitError(module.getLoc())
            << DiagnosticCode::InvalidAccumulatorType
            << "ga-micro-batch: accumulator-type must be one "
               "of f16, bf16, f32, f64, got '"
            << accumulatorType << "'";
        return signalPassFailure();
      }
    }

    FailureOr<SmallVector<func::FuncOp>> steps =
        collectTrainingSteps(module, funcNames);
    if (failed(steps))
      return signalPassFailure();
    for (func::FuncOp func : *steps) {
      // Reuses the analysis of --ga-check-training-step when it ran just
      // before (its diagnostics were reported there).
      BatchDependence &analysis =
          getChildAnalysis<BatchDependenceAnalysis>(func).getReported(
              allowGhostBatch, recomputeStatistics);
      if (!analysis.succeeded() ||
          (!dynamicMicroBatches &&
           failed(checkMicroBatchCount(analysis, microBatches))))
        return signalPassFailure();
      // `ga.data_parallel`: the batch is the concatenation of the ranks'
      // shards (DataParallel.cpp); the rewritten step no longer needs it.
      config.dataParallel = func->hasAttr(kDataParallelAttr);
      if (config.dataParallel && dynamicMicroBatches) {
        func.emitError() << "'" << kDataParallelAttr
                         << "' cannot be combined with dynamic-micro-batches";
        return signalPassFailure();
      }
      func->removeAttr(kDataParallelAttr);
      StepRewriter rewriter(func, analysis, config);
      if (failed(rewriter.run()))
        return signalPassFailure();
      // What the analysis accepts must be rewritten to valid IR: a failure
      // here is a bug of the rewrite, reported at the step rather than left
      // to the pass manager's verifier after the pass.
      if (failed(verify(func))) {
        func.emitError() << "internal error: the micro-batch rewrite of this "
                            "step produced invalid IR (see the errors above); "
                            "please report it with the input";
        return signalPassFailure();
      }
      ++numFunctions;
      numLoops += rewriter.numLoops;
      numStatisticLoops += rewriter.numStatisticLoops;
      numAccumulators += rewriter.numAccumulators;
      numPerSampleOps += rewriter.numPerSampleOps;
      numStoredValues += rewriter.numStoredValues;
    }
  }
};
} // namespace
