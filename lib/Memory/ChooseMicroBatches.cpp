//===- ChooseMicroBatches.cpp - N from a micro-batch size or a budget -----===//
//
// --ga-choose-micro-batches resolves `micro-batch-size=M` and
// `max-memory=<bytes>` into the number of micro-batches N of each training
// step, records it as `ga.micro_batches`, and with `apply` runs the
// --ga-accumulate rewrite with that N. It runs the rewrite and the CPU (or,
// with target=cuda, the GPU) bufferization (GAPipelineStages) on copies of
// the step; the --ga-accumulate
// pipeline (GAPipelines) adds it, so it sits between the two.
//
//===----------------------------------------------------------------------===//

#include "StepMemory.h"

#include "ga/Analysis/BatchDependence.h"
#include "ga/IR/Diagnostics.h"
#include "ga/IR/GADialect.h"
#include "ga/Memory/Passes.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

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
/// One candidate configuration of a step: N and the recompute set, with
/// its predicted total peak and time.
struct Choice {
  int64_t n = 0;
  std::string recompute;
  int64_t peak = 0;
  /// The arithmetic work of the step with this N and recompute set, and
  /// what the recomputation adds to it (against `none` at the same N).
  int64_t work = 0, extraWork = 0;
  /// The bytes its ops read from beyond the cache (StepCost).
  int64_t movedBytes = 0;
  /// The estimated time: the work plus `memory-cost` operations per byte
  /// read from beyond the cache (StepCost).
  double time = 0;
  /// How many candidates were bufferized to choose this one (the others
  /// were pruned by their estimated time).
  int64_t measured = 0;
};

/// A recompute set as the planner weighs it: its --ga-accumulate options
/// and the peaks measured so far, by pair of micro-batch sizes (N with the
/// same sizes have the same buffers: only the trip counts of the loops
/// differ).
struct CandidateSet {
  std::string name, options;
  /// Whether a failure of the analyses drops the set (with `auto`) rather
  /// than the choice.
  bool optional = false;
  /// The smallest N whose bufferization failed (an optional set has no
  /// candidate from there on, as when the N were measured in order).
  int64_t failedFrom = std::numeric_limits<int64_t>::max();
  DenseMap<std::pair<int64_t, int64_t>, int64_t> peaks;
};

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
  /// The recompute sets to consider: the one `recompute` names, or with
  /// `auto` every set of --ga-rematerialize (getRecomputeSets()).
  SmallVector<std::string> getCandidateSets();
  /// The candidate of least estimated time whose total peak is at most
  /// `budget` (N fixed by `micro-batches` when given), or failure (with an
  /// error at `func` naming the smallest peak and its configuration).
  FailureOr<Choice> fitBudget(func::FuncOp func, int64_t batchSize,
                              int64_t budget);
  /// The candidates of every set of getCandidateSets() and N from `first`
  /// to `last`, with their work and estimated time (a candidate whose
  /// rewrite fails is left out with `auto`), and the index of each
  /// one's set in `sets`.
  FailureOr<SmallVector<Choice>>
  getCandidateTimes(func::FuncOp func, int64_t batchSize, int64_t first,
                    int64_t last, SmallVectorImpl<CandidateSet> &sets,
                    SmallVectorImpl<size_t> &setOf);
  /// The cost of `set` with `n` micro-batches of a batch of `batchSize`:
  /// from `model` (built at N = 1 when `everyN` N are weighed and the
  /// traffic counts), else from the rewrite of `n`, or without the
  /// traffic `shared`, the work of the first N, which is every N's.
  FailureOr<StepCost> getCandidateCost(func::FuncOp func, int64_t n,
                                       int64_t batchSize,
                                       const CandidateSet &set, bool everyN,
                                       std::unique_ptr<StepCostModel> &model,
                                       std::optional<StepCost> &shared);
  /// Parses `cache-size` (default: this host's cache, none for
  /// target=cuda) into `cacheBytes` and checks `memory-cost`.
  LogicalResult parseTimeModel();

  /// The cache of the time model, in bytes.
  int64_t cacheBytes = 0;
  /// Runs the --ga-accumulate rewrite of each of `steps` with the N and
  /// recompute set recorded on it, and drops the records.
  LogicalResult applyChoices(ArrayRef<func::FuncOp> steps);
};
} // namespace

FailureOr<SmallVector<func::FuncOp>> ChooseMicroBatchesPass::getSteps() {
  // The steps --ga-micro-batch rewrites, by the same rule.
  return collectTrainingSteps(getOperation(), funcNames);
}

SmallVector<std::string> ChooseMicroBatchesPass::getCandidateSets() {
  if (recompute != "auto")
    return {recompute};
  SmallVector<std::string> sets;
  for (StringRef set : getRecomputeSets())
    sets.push_back(set.str());
  return sets;
}

/// The total peak of `set` with `n` micro-batches of a batch of
/// `batchSize`, measured once per pair of sizes; std::nullopt when an
/// optional set fails from `n` on, failure when a required one fails.
static FailureOr<std::optional<int64_t>> measurePeak(
    CandidateSet &set, int64_t n, int64_t batchSize,
    llvm::function_ref<FailureOr<MemoryUsage>(int64_t, StringRef)> measure,
    MLIRContext *context) {
  if (n >= set.failedFrom)
    return std::optional<int64_t>();
  std::pair<int64_t, int64_t> sizes{llvm::divideCeil(batchSize, n),
                                    batchSize / n};
  auto it = set.peaks.find(sizes);
  if (it != set.peaks.end())
    return std::optional<int64_t>(it->second);
  // An optional set's failure is silent, as its rewrite's is.
  std::optional<ScopedDiagnosticHandler> silence;
  if (set.optional)
    silence.emplace(context, [](Diagnostic &) { return success(); });
  FailureOr<MemoryUsage> usage = measure(n, set.options);
  if (failed(usage) && !set.optional)
    return failure();
  if (failed(usage)) {
    set.failedFrom = n;
    return std::optional<int64_t>();
  }
  return std::optional<int64_t>(
      set.peaks.try_emplace(sizes, usage->getTotalPeak()).first->second);
}

FailureOr<Choice> ChooseMicroBatchesPass::fitBudget(func::FuncOp func,
                                                    int64_t batchSize,
                                                    int64_t budget) {
  ModuleOp module = getOperation();
  // The classes the report gives the arguments (empty: inferred).
  FailureOr<SmallVector<BufferRole>> roles =
      parseRoles(argumentRoles, func.getLoc());
  if (failed(roles))
    return failure();
  // The bufferization of the target the budget is for: the same analysis
  // as --ga-memory-report's (device bytes for target=cuda).
  FailureOr<MeasuredLowering> lowering =
      parseMeasuredLowering(target, cpuOptions, gpuOptions, func.getLoc());
  if (failed(lowering))
    return failure();
  SmallVector<std::string> pairs(inPlace.begin(), inPlace.end());
  int64_t measured = 0;
  auto measure = [&](int64_t n, StringRef options) {
    ++numCandidates;
    ++measured;
    return estimateStepMemory(module, func, n, options, *lowering, *roles,
                              pairs);
  };

  // The time of every (set, N) first: no bufferization, two rewrites per
  // set (StepCostModel), or one per N where the model does not apply.
  int64_t first = microBatches ? microBatches : 1;
  int64_t last = microBatches ? microBatches : batchSize;
  SmallVector<CandidateSet> sets;
  SmallVector<size_t> setOf;
  FailureOr<SmallVector<Choice>> candidates =
      getCandidateTimes(func, batchSize, first, last, sets, setOf);
  if (failed(candidates))
    return failure();
  SmallVector<Choice> &order = *candidates;
  SmallVector<size_t> byTime =
      llvm::to_vector(llvm::seq<size_t>(0, order.size()));
  // Ties by N, then in the order of the sets.
  llvm::sort(byTime, [&](size_t a, size_t b) {
    return std::tie(order[a].time, order[a].n, a) <
           std::tie(order[b].time, order[b].n, b);
  });

  // The first candidate by time that fits is the choice: every later one
  // takes at least as long, so its peak need not be measured.
  for (size_t i : byTime) {
    FailureOr<std::optional<int64_t>> peak = measurePeak(
        sets[setOf[i]], order[i].n, batchSize, measure, &getContext());
    if (failed(peak))
      return failure();
    if (!*peak || **peak + reserved > budget)
      continue;
    Choice best = order[i];
    best.peak = **peak + reserved;
    best.measured = measured;
    return best;
  }

  // Nothing fits: the smallest peak of all (the first in the listed order
  // among equals) names the smallest budget.
  std::optional<Choice> smallest;
  for (auto [i, choice] : llvm::enumerate(order)) {
    FailureOr<std::optional<int64_t>> peak = measurePeak(
        sets[setOf[i]], choice.n, batchSize, measure, &getContext());
    if (failed(peak))
      return failure();
    if (*peak && (!smallest || **peak + reserved < smallest->peak)) {
      smallest = choice;
      smallest->peak = **peak + reserved;
    }
  }
  if (!smallest)
    return emitError(func.getLoc())
           << DiagnosticCode::BudgetNotMet << "max-memory=" << maxMemory
           << ": no candidate configuration could be measured";
  InFlightDiagnostic error =
      emitError(func.getLoc())
      << DiagnosticCode::BudgetNotMet
      << "no number of micro-batches fits max-memory=" << maxMemory
      << ": the smallest static "
      << (lowering->cuda ? "device peak (target=cuda)" : "peak") << " is "
      << formatByteCount(smallest->peak) << ", with N = " << smallest->n;
  if (smallest->recompute != "none")
    error << " and recompute=" << smallest->recompute;
  if (reserved)
    error << " (" << static_cast<int64_t>(reserved)
          << " bytes of it for the returned results)";
  error << "; the smallest budget that fits is max-memory=" << smallest->peak
        << " (see --ga-memory-report)";
  return error;
}

LogicalResult ChooseMicroBatchesPass::parseTimeModel() {
  Location where = getOperation().getLoc();
  if (memoryCost < 0)
    return emitError(where)
           << DiagnosticCode::InvalidOptions
           << "--ga-choose-micro-batches: memory-cost must be at least 0";
  if (cacheSize.empty()) {
    cacheBytes = target == "cuda" ? 0 : getHostCacheBytes();
    return success();
  }
  FailureOr<int64_t> bytes = parseByteCount(cacheSize);
  if (failed(bytes))
    return emitError(where)
           << DiagnosticCode::InvalidOptions
           << "--ga-choose-micro-batches: invalid cache-size '" << cacheSize
           << "': expected a number of bytes, optionally followed by "
           << getByteCountUnits();
  cacheBytes = *bytes;
  return success();
}

FailureOr<StepCost> ChooseMicroBatchesPass::getCandidateCost(
    func::FuncOp func, int64_t n, int64_t batchSize, const CandidateSet &set,
    bool everyN, std::unique_ptr<StepCostModel> &model,
    std::optional<StepCost> &shared) {
  if (memoryCost == 0 && shared)
    return *shared;
  if (memoryCost > 0 && everyN && n == 1 && !model) {
    FailureOr<std::unique_ptr<StepCostModel>> built =
        StepCostModel::build(getOperation(), func, batchSize, set.options);
    if (failed(built))
      return failure();
    model = std::move(*built);
  }
  FailureOr<StepCost> cost = failure();
  if (model && !verifyTraffic)
    return model->getCost(n, cacheBytes);
  // The rewrite of this N: where the set has no model, without the
  // traffic, or to check the model against (verify-traffic).
  cost = estimateStepCost(getOperation(), func, n, set.options, cacheBytes);
  if (failed(cost))
    return failure();
  if (model) {
    StepCost modeled = model->getCost(n, cacheBytes);
    emitRemark(func.getLoc())
        << "N = " << n << ", recompute=" << set.name << ": work "
        << modeled.work << " modeled, " << cost->work << " rewritten; moved "
        << modeled.movedBytes << " bytes modeled, " << cost->movedBytes
        << " rewritten";
    return modeled;
  }
  if (memoryCost == 0) {
    // Not a term of the time: not recorded.
    cost->movedBytes = 0;
    shared = *cost;
  }
  return cost;
}

FailureOr<SmallVector<Choice>> ChooseMicroBatchesPass::getCandidateTimes(
    func::FuncOp func, int64_t batchSize, int64_t first, int64_t last,
    SmallVectorImpl<CandidateSet> &sets, SmallVectorImpl<size_t> &setOf) {
  // The work of `none` at each N, which the recomputation adds to.
  DenseMap<int64_t, int64_t> baseWork;
  SmallVector<Choice> candidates;
  for (const std::string &name : getCandidateSets()) {
    CandidateSet set;
    set.name = name;
    set.options = accumulateOptions;
    if (name != "none")
      set.options += " recompute=" + name;
    // A recompute set that the analyses cannot follow (with `auto`) is left
    // out, silently: the step without it is still a candidate.
    set.optional = recompute == "auto" && name != "none";
    // The model of the set's traffic, or the work of every N (without
    // the traffic, the work does not depend on N: the accumulation is
    // fused into the producers, and one rewrite serves every N).
    std::unique_ptr<StepCostModel> model;
    std::optional<StepCost> shared;
    for (int64_t n = first; n <= last; ++n) {
      std::optional<ScopedDiagnosticHandler> silence;
      if (set.optional)
        silence.emplace(&getContext(), [](Diagnostic &) { return success(); });
      FailureOr<StepCost> cost = getCandidateCost(func, n, batchSize, set,
                                                  first < last, model, shared);
      if (failed(cost) && set.optional)
        break;
      if (failed(cost))
        return failure();
      if (name == "none")
        baseWork[n] = cost->work;
      Choice choice{n,
                    name,
                    0,
                    cost->work,
                    0,
                    cost->movedBytes,
                    double(cost->work) + memoryCost * double(cost->movedBytes)};
      candidates.push_back(choice);
      setOf.push_back(sets.size());
    }
    sets.push_back(std::move(set));
  }
  for (Choice &choice : candidates)
    if (auto it = baseWork.find(choice.n); it != baseWork.end())
      choice.extraWork = choice.work - it->second;
  return candidates;
}

void ChooseMicroBatchesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::string> given;
  // micro-batches with max-memory fixes N: only the recompute set is
  // chosen.
  if (microBatches && maxMemory.empty())
    given.push_back(llvm::formatv("micro-batches={0}", microBatches));
  if (microBatchSize)
    given.push_back(llvm::formatv("micro-batch-size={0}", microBatchSize));
  if (!maxMemory.empty())
    given.push_back("max-memory=" + maxMemory);
  if (dynamicMicroBatches)
    given.push_back("dynamic-micro-batches=true");
  if (given.size() > 1) {
    emitError(module.getLoc())
        << DiagnosticCode::ContradictoryOptions << "contradictory options "
        << llvm::join(given, ", ")
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
  if (recompute != "auto" &&
      !llvm::is_contained(getRecomputeSets(), recompute)) {
    emitError(module.getLoc())
        << "--ga-choose-micro-batches: unknown recompute set '" << recompute
        << "' (expected auto, " << llvm::join(getRecomputeSets(), ", ") << ")";
    return signalPassFailure();
  }
  if (reserved < 0) {
    emitError(module.getLoc())
        << DiagnosticCode::InvalidMaxMemory
        << "--ga-choose-micro-batches: reserved="
        << static_cast<int64_t>(reserved) << " is negative";
    return signalPassFailure();
  }
  if (failed(parseTimeModel()))
    return signalPassFailure();
  int64_t budget = 0;
  if (!maxMemory.empty()) {
    FailureOr<int64_t> parsed = parseByteCount(maxMemory);
    if (failed(parsed)) {
      emitError(module.getLoc())
          << DiagnosticCode::InvalidMaxMemory << "invalid max-memory '"
          << maxMemory
          << "': expected a number of bytes, optionally followed by "
          << getByteCountUnits();
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
      FailureOr<Choice> fit = fitBudget(func, *batchSize, budget);
      if (failed(fit))
        return signalPassFailure();
      n = fit->n;
      // What was chosen and what it is predicted to cost.
      func->setAttr("ga.predicted_peak", builder.getI64IntegerAttr(fit->peak));
      func->setAttr("ga.recompute_work",
                    builder.getI64IntegerAttr(fit->extraWork));
      func->setAttr("ga.recompute", builder.getStringAttr(fit->recompute));
      func->setAttr("ga.estimated_work", builder.getI64IntegerAttr(fit->work));
      func->setAttr("ga.moved_bytes",
                    builder.getI64IntegerAttr(fit->movedBytes));
      func->setAttr("ga.candidates_measured",
                    builder.getI64IntegerAttr(fit->measured));
    }
    func->setAttr(kMicroBatchesAttrName, builder.getI64IntegerAttr(n));
  }
  if (apply && failed(applyChoices(*steps)))
    signalPassFailure();
}

LogicalResult
ChooseMicroBatchesPass::applyChoices(ArrayRef<func::FuncOp> steps) {
  ModuleOp module = getOperation();
  // The rewrite of each step with its N, by name: a rewrite may replace
  // the function it rewrites.
  SmallVector<std::tuple<std::string, int64_t, std::string>> chosen;
  for (func::FuncOp func : steps) {
    auto set = func->getAttrOfType<StringAttr>("ga.recompute");
    chosen.emplace_back(
        func.getSymName().str(),
        cast<IntegerAttr>(func->getAttr(kMicroBatchesAttrName)).getInt(),
        set ? set.str()
            : (recompute == "auto" ? "none" : recompute.getValue()));
    for (StringRef name :
         {StringRef(kMicroBatchesAttrName), StringRef("ga.recompute"),
          StringRef("ga.predicted_peak"), StringRef("ga.recompute_work"),
          StringRef("ga.candidates_measured"), StringRef("ga.estimated_work"),
          StringRef("ga.moved_bytes")})
      func->removeAttr(name);
  }
  for (auto &[name, n, set] : chosen) {
    std::string text =
        llvm::formatv("micro-batches={0} func={1} recompute={2} {3}", n, name,
                      set, accumulateOptions);
    auto options = AccumulatePipelineOptions::createFromString(text);
    if (!options) {
      return emitError(module.getLoc())
             << DiagnosticCode::InvalidOptions
             << "invalid --ga-accumulate options '" << accumulateOptions << "'";
    }
    OpPassManager pm(ModuleOp::getOperationName());
    buildMicroBatchRewritePipeline(pm, *options);
    if (failed(runPipeline(pm, module)))
      return failure();
  }
  return success();
}
