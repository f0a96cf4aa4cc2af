//===- ChooseMicroBatches.cpp - N from a micro-batch size or a budget -----===//
//
// --ga-choose-micro-batches resolves `micro-batch-size=M` and
// `max-memory=<bytes>` into the number of micro-batches N of each training
// step, records it as `ga.micro_batches`, and with `apply` runs the
// --ga-accumulate rewrite with that N. It runs the rewrite and the CPU
// bufferization (GAPipelineStages) on copies of the step; the --ga-accumulate
// pipeline (GAPipelines) adds it, so it sits between the two.
//
//===----------------------------------------------------------------------===//

#include "StepMemory.h"

#include "ga/Analysis/BatchDependence.h"
#include "ga/IR/GADialect.h"
#include "ga/Memory/Passes.h"
#include "ga/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CHOOSEMICROBATCHES
#include "ga/Memory/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

namespace {
struct ChooseMicroBatchesPass
    : public ga::impl::ChooseMicroBatchesBase<ChooseMicroBatchesPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    getStepMemoryDialects(registry);
  }

  void runOnOperation() override;

  /// The steps to configure: the functions named by `func`, or every
  /// function with a `ga.batch` argument.
  FailureOr<SmallVector<func::FuncOp>> getSteps();
  /// The smallest N whose static peak is at most `budget`, or failure (with
  /// an error at `func`).
  FailureOr<int64_t> fitBudget(func::FuncOp func, int64_t batchSize,
                               int64_t budget);
};
} // namespace

FailureOr<SmallVector<func::FuncOp>> ChooseMicroBatchesPass::getSteps() {
  // The steps --ga-micro-batch rewrites, by the same rule.
  return collectTrainingSteps(getOperation(), funcNames);
}

FailureOr<int64_t> ChooseMicroBatchesPass::fitBudget(func::FuncOp func,
                                                     int64_t batchSize,
                                                     int64_t budget) {
  // N with the same micro-batch sizes have the same buffers (only the trip
  // counts of the loops differ): measure each pair of sizes once.
  DenseMap<std::pair<int64_t, int64_t>, int64_t> peaks;
  int64_t bestPeak = std::numeric_limits<int64_t>::max(), bestN = 0;
  for (int64_t n = 1; n <= batchSize; ++n) {
    std::pair<int64_t, int64_t> sizes{llvm::divideCeil(batchSize, n),
                                      batchSize / n};
    auto it = peaks.find(sizes);
    if (it == peaks.end()) {
      FailureOr<MemoryUsage> usage = estimateStepMemory(
          getOperation(), func, n, accumulateOptions, cpuOptions);
      if (failed(usage))
        return failure();
      ++numCandidates;
      it = peaks.try_emplace(sizes, usage->getTotalPeak()).first;
    }
    if (it->second <= budget)
      return n;
    if (it->second < bestPeak) {
      bestPeak = it->second;
      bestN = n;
    }
  }
  return emitError(func.getLoc())
         << "no number of micro-batches fits max-memory=" << maxMemory
         << ": the smallest static peak is " << formatByteCount(bestPeak)
         << ", with N = " << bestN << " (see --ga-memory-report)";
}

void ChooseMicroBatchesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::string> given;
  if (microBatches)
    given.push_back(llvm::formatv("micro-batches={0}", microBatches));
  if (microBatchSize)
    given.push_back(llvm::formatv("micro-batch-size={0}", microBatchSize));
  if (!maxMemory.empty())
    given.push_back("max-memory=" + maxMemory);
  if (dynamicMicroBatches)
    given.push_back("dynamic-micro-batches=true");
  if (given.size() > 1) {
    emitError(module.getLoc())
        << "contradictory options " << llvm::join(given, ", ")
        << ": give only one of micro-batches, "
           "micro-batch-size, max-memory and "
           "dynamic-micro-batches";
    return signalPassFailure();
  }
  if (microBatchSize < 0 || (maxMemory.empty() && microBatchSize == 0)) {
    emitError(module.getLoc())
        << "--ga-choose-micro-batches needs micro-batch-size "
           "(>= 1) or max-memory";
    return signalPassFailure();
  }
  int64_t budget = 0;
  if (!maxMemory.empty()) {
    FailureOr<int64_t> parsed = parseByteCount(maxMemory);
    if (failed(parsed)) {
      emitError(module.getLoc()) << "invalid max-memory '" << maxMemory
                                 << "': expected a number of bytes, optionally "
                                    "followed by KiB, MiB or GiB";
      return signalPassFailure();
    }
    budget = *parsed;
  }

  FailureOr<SmallVector<func::FuncOp>> steps = getSteps();
  if (failed(steps))
    return signalPassFailure();
  Builder builder(&getContext());
  for (func::FuncOp func : *steps) {
    std::optional<int64_t> batchSize = getStepBatchSize(func);
    StringRef option = microBatchSize ? "micro-batch-size" : "max-memory";
    if (!batchSize) {
      emitError(func.getLoc()) << option << ": '" << func.getSymName()
                               << "' has no per-sample argument (ga.batch)";
      return signalPassFailure();
    }
    if (ShapedType::isDynamic(*batchSize)) {
      emitError(func.getLoc())
          << option << " needs a batch size known at compile "
          << "time, but the batch of '" << func.getSymName()
          << "' is only known at run time; use "
             "dynamic-micro-batches=true and pass N";
      return signalPassFailure();
    }
    int64_t n = 1;
    if (microBatchSize) {
      n = llvm::divideCeil(*batchSize, microBatchSize);
    } else {
      FailureOr<int64_t> fit = fitBudget(func, *batchSize, budget);
      if (failed(fit))
        return signalPassFailure();
      n = *fit;
    }
    func->setAttr(kMicroBatchesAttrName, builder.getI64IntegerAttr(n));
  }
  if (!apply)
    return;

  // The rewrite of each step with its N, by name: a rewrite may replace
  // the function it rewrites.
  SmallVector<std::pair<std::string, int64_t>> chosen;
  for (func::FuncOp func : *steps) {
    chosen.emplace_back(
        func.getSymName().str(),
        cast<IntegerAttr>(func->getAttr(kMicroBatchesAttrName)).getInt());
    func->removeAttr(kMicroBatchesAttrName);
  }
  for (auto &[name, n] : chosen) {
    std::string text = llvm::formatv("micro-batches={0} func={1} {2}", n, name,
                                     accumulateOptions);
    auto options = AccumulatePipelineOptions::createFromString(text);
    if (!options) {
      emitError(module.getLoc())
          << "invalid --ga-accumulate options '" << accumulateOptions << "'";
      return signalPassFailure();
    }
    OpPassManager pm(ModuleOp::getOperationName());
    buildMicroBatchRewritePipeline(pm, *options);
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
  }
}
