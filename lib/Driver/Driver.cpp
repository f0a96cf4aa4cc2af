//===- Driver.cpp - one call from a training step to its library ----------===//
//
// Implements include/ga/Driver/Driver.h with the pipelines' own builders and
// option structs: no pass pipeline text is built or parsed on the way from
// the caller's options to the passes (the memory passes still take the
// rewrite's and the lowering's options as text, printed here from the typed
// options).
//
//===----------------------------------------------------------------------===//

#include "ga/Driver/Driver.h"

#include "Stages.h"

#include "ga/Codegen/Common/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/IR/Diagnostics.h"
#include "ga/Memory/Passes.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::driver;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// `pairs` as the `i:j` strings of the passes' list options.
static SmallVector<std::string> toPairStrings(ArrayRef<IndexPair> pairs) {
  SmallVector<std::string> strings;
  for (auto [first, second] : pairs)
    strings.push_back(std::to_string(first) + ":" + std::to_string(second));
  return strings;
}

/// The rewrite's options of `options` at N = `microBatches` with the
/// recompute set `recompute`.
void driver::getRewriteOptions(const DriverOptions &options,
                               int64_t microBatches, StringRef recompute,
                               AccumulatePipelineOptions &rewrite) {
  rewrite.microBatches = microBatches;
  rewrite.allowGhostBatch = options.allowGhostBatch;
  rewrite.recomputeStatistics = options.recomputeStatistics;
  rewrite.fuse = options.fuse;
  rewrite.accumulatorType = options.accumulatorType;
  rewrite.recompute = recompute.str();
}

/// `options` as the text of a pass option (`a=1 b=2`), for the memory
/// passes, which take the options of the lowering they run as text.
std::string driver::printOptions(const ::mlir::detail::PassOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  options.print(os);
  StringRef printed = StringRef(text).trim();
  if (printed.consume_front("{"))
    printed.consume_back("}");
  return printed.str();
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

/// Runs `build`'s passes on `module`.
LogicalResult driver::runPasses(ModuleOp module,
                                function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  build(pm);
  return pm.run(module);
}

/// Marks the per-sample arguments of `step` (when given), then chooses N
/// and the recompute set as --ga-choose-micro-batches does, reading the
/// choice from the attributes it records on the step (and removing them).
static LogicalResult chooseMicroBatches(ModuleOp step,
                                        const DriverOptions &options,
                                        DriverResult &result) {
  AccumulatePipelineOptions rewrite;
  getRewriteOptions(options, /*microBatches=*/1, "", rewrite);
  ChooseMicroBatchesOptions choose;
  choose.microBatchSize = options.microBatchSize;
  choose.maxMemory = options.maxMemory;
  choose.reserved = options.reservedBytes;
  choose.microBatches = options.microBatches;
  choose.accumulateOptions = printRewriteOptions(rewrite);
  choose.recompute = options.recompute.empty() ? "auto" : options.recompute;
  choose.cpuOptions = printOptions(options.cpu);
  // A budget for the GPU is device bytes: the GPU step's bufferization.
  if (options.measuresDevice()) {
    choose.target = "cuda";
    choose.gpuOptions = printOptions(options.nvvm);
  }
  // Measured as the report measures the library: its results written in
  // place, its arguments of the report's classes.
  choose.inPlace = toPairStrings(options.inPlace);
  choose.argumentRoles.assign(options.reportRoles.begin(),
                              options.reportRoles.end());
  if (failed(runPasses(step, [&](OpPassManager &pm) {
        pm.addPass(createCheckConstantIndices());
        pm.addPass(createFoldIotaOperands());
        if (!options.batchArgs.empty()) {
          MarkBatchArgsOptions mark;
          mark.batchArgs = toPairStrings(options.batchArgs);
          pm.addPass(createMarkBatchArgs(mark));
        }
        pm.addPass(createChooseMicroBatches(choose));
      })))
    return failure();

  auto func = step.lookupSymbol<func::FuncOp>(options.funcName);
  auto n = func ? func->getAttrOfType<IntegerAttr>(kMicroBatchesAttrName)
                : IntegerAttr();
  if (!n)
    return emitError(step.getLoc())
           << "internal error: --ga-choose-micro-batches chose no number of "
              "micro-batches for @"
           << options.funcName;
  result.microBatches = n.getInt();
  auto set = func->getAttrOfType<StringAttr>("ga.recompute");
  result.recompute =
      set ? set.str()
          : (options.recompute.empty() ? "none" : options.recompute);
  if (auto peak = func->getAttrOfType<IntegerAttr>("ga.predicted_peak"))
    result.predictedPeak = peak.getInt();
  if (auto work = func->getAttrOfType<IntegerAttr>("ga.recompute_work"))
    result.recomputeWork = work.getInt();
  for (StringRef name :
       {StringRef(kMicroBatchesAttrName), StringRef("ga.recompute"),
        StringRef("ga.predicted_peak"), StringRef("ga.recompute_work"),
        StringRef("ga.candidates_measured"), StringRef("ga.estimated_work"),
        StringRef("ga.moved_bytes")})
    func->removeAttr(name);
  return success();
}

/// The number of tensor arguments and of results of `name` in `module`.
static std::pair<unsigned, unsigned> countTensors(ModuleOp module,
                                                  StringRef name) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func)
    return {0, 0};
  unsigned tensors = llvm::count_if(
      func.getArgumentTypes(), [](Type type) { return isa<TensorType>(type); });
  return {tensors, func.getNumResults()};
}

/// Adds --ga-bucket-gradients with `options.bucketSize` (0: no buckets).
static void buildBuckets(OpPassManager &pm, const DriverOptions &options) {
  if (options.bucketSize <= 0)
    return;
  BucketGradientsOptions buckets;
  buckets.bucketSize = options.bucketSize;
  pm.addNestedPass<func::FuncOp>(createBucketGradients(buckets));
}

void driver::buildCollectives(OpPassManager &pm, const DriverOptions &options) {
  // For the GPU the buckets are formed with the rewrite (see runDriver).
  if (options.target != DriverTarget::CUDA)
    buildBuckets(pm, options);
  if (options.hostCollectives)
    pm.addPass(createConvertGAToHostCollectives());
  if (options.mpiCollectives) {
    ConvertGAToMPIOptions mpi;
    if (!options.mpiImplementation.empty())
      mpi.implementation = options.mpiImplementation;
    mpi.entry = options.mpiEntry;
    pm.addPass(createConvertGAToMPI(mpi));
    // MLIR 22's --convert-to-llvm does not lower mpi.comm_size.
    pm.addPass(createLowerMPICommSize());
  }
}

/// Refuses collectives that no lowering of `options.target` has: host and
/// MPI calls at once, or MPI calls from a GPU step (--ga-lower-to-nvvm
/// lowers collectives to NCCL itself).
static LogicalResult checkCollectives(ModuleOp module,
                                      const DriverOptions &options) {
  if (!options.mpiCollectives)
    return success();
  if (options.hostCollectives)
    return emitError(module.getLoc())
           << DiagnosticCode::ContradictoryOptions
           << "contradictory options: host collectives and MPI collectives "
              "(give one of them)";
  if (options.target == DriverTarget::CUDA)
    return emitError(module.getLoc())
           << DiagnosticCode::ContradictoryOptions
           << "contradictory options: MPI collectives for the CUDA target "
              "(the GPU lowering calls NCCL)";
  return success();
}

LogicalResult driver::writeResultsInPlace(ModuleOp module,
                                          const DriverOptions &options) {
  WriteResultsInPlaceOptions write;
  write.funcName = options.funcName;
  write.pairs = toPairStrings(options.inPlace);
  return runPasses(module, [&](OpPassManager &pm) {
    pm.addPass(createWriteResultsInPlace(write));
  });
}

/// Adds the lowering of `options.target` (CPU or CUDA), after that of the
/// collectives.
static void buildLowering(OpPassManager &pm, const DriverOptions &options) {
  buildCollectives(pm, options);
  if (options.target == DriverTarget::CUDA)
    buildLowerToNVVMPipeline(pm, options.nvvm);
  else
    buildLowerToCPUPipeline(pm, options.cpu);
}

/// Whether the bufferized CPU step `step` keeps every result of
/// `options.inPlace` in place: the private function `impl` that computes
/// the step takes its `arguments` tensor arguments as buffers and returns
/// (or, with out-params, takes as out-parameters) only the `results` minus
/// the written ones.
static bool keptInPlaceOnCPU(ModuleOp step, StringRef impl, unsigned arguments,
                             unsigned results, const DriverOptions &options) {
  auto func = step.lookupSymbol<func::FuncOp>(impl);
  auto isBuffer = [](Type type) { return isa<BaseMemRefType>(type); };
  size_t kept = results - options.inPlace.size();
  bool outParams = options.cpu.outParams;
  return func && func.getNumResults() == (outParams ? 0 : kept) &&
         static_cast<size_t>(
             llvm::count_if(func.getArgumentTypes(), isBuffer)) ==
             arguments + (outParams ? kept : 0);
}

/// Whether the step `lowered` for the GPU keeps every result in place: its
/// results come back as values, so the private function `impl` returns what
/// the public step returns (the written results were dropped as the
/// buffers of their arguments).
static bool keptInPlaceOnGPU(ModuleOp lowered, StringRef impl, StringRef name) {
  auto implFunc =
      dyn_cast_or_null<FunctionOpInterface>(lowered.lookupSymbol(impl));
  auto func = dyn_cast_or_null<FunctionOpInterface>(lowered.lookupSymbol(name));
  return implFunc && func &&
         llvm::equal(implFunc.getResultTypes(), func.getResultTypes());
}

/// The step `rewritten` with the results of `options.inPlace` written into
/// their arguments and lowered for the target, or null when they cannot all
/// be written in place: --ga-write-results-in-place refuses, the lowering
/// fails on the in-place form, or it does not keep one in place (on the
/// CPU checked after bufferization, on the GPU on the lowered step).
static OwningOpRef<ModuleOp> lowerInPlace(ModuleOp rewritten,
                                          const DriverOptions &options) {
  OwningOpRef<ModuleOp> step = rewritten.clone();
  WriteResultsInPlaceOptions write;
  write.funcName = options.funcName;
  write.pairs = toPairStrings(options.inPlace);
  // The private function that --ga-write-results-in-place moves the step
  // into, and what it must take once bufferized: its tensor arguments, and
  // an out-parameter per result that is not written in place.
  std::string impl = options.funcName + "_in_place";
  if (failed(runPasses(*step, [&](OpPassManager &pm) {
        pm.addPass(createWriteResultsInPlace(write));
      })))
    return nullptr;
  if (options.target == DriverTarget::CUDA) {
    if (failed(runPasses(*step,
                         [&](OpPassManager &pm) {
                           buildLowerToNVVMPipeline(pm, options.nvvm);
                         })) ||
        !keptInPlaceOnGPU(*step, impl, options.funcName))
      return nullptr;
    return step;
  }
  auto [arguments, results] = countTensors(*step, impl);
  if (failed(runPasses(*step,
                       [&](OpPassManager &pm) {
                         buildBufferizeForCPUPipeline(pm, options.cpu);
                       })) ||
      !keptInPlaceOnCPU(*step, impl, arguments, results, options))
    return nullptr;
  if (failed(runPasses(*step, [&](OpPassManager &pm) {
        buildLowerBufferizedForCPUPipeline(pm, options.cpu);
      })))
    return nullptr;
  return step;
}

/// lowerInPlace with its diagnostics held back: emitted when the in-place
/// form is used, dropped when the copying form is (whose lowering gives its
/// own).
static OwningOpRef<ModuleOp> lowerInPlaceQuietly(ModuleOp rewritten,
                                                 const DriverOptions &options) {
  MLIRContext *context = rewritten.getContext();
  std::vector<Diagnostic> held;
  OwningOpRef<ModuleOp> lowered;
  {
    ScopedDiagnosticHandler hold(context, [&](Diagnostic &diag) {
      held.push_back(std::move(diag));
      return success();
    });
    lowered = lowerInPlace(rewritten, options);
  }
  if (lowered)
    for (Diagnostic &diag : held)
      context->getDiagEngine().emit(std::move(diag));
  return lowered;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// The options of a sharding pass (--ga-shard-optimizer,
/// --ga-shard-parameters) that both take alike: the function, and the rank
/// of `shard` in its world.
template <typename Options, typename Shard>
static Options getShardOptions(StringRef funcName, const Shard &shard) {
  Options options;
  options.funcName = funcName.str();
  options.rank = shard.rank;
  options.world = shard.world;
  return options;
}

/// Adds --ga-shard-optimizer for `shard` (after the rewrite).
static void buildShardOptimizer(OpPassManager &pm, StringRef funcName,
                                const ShardOptimizer &shard) {
  auto zero = getShardOptions<ShardOptimizerOptions>(funcName, shard);
  zero.params.assign(shard.params.begin(), shard.params.end());
  zero.stateResults.assign(shard.stateResults.begin(),
                           shard.stateResults.end());
  zero.stateArgs.assign(shard.stateArgs.begin(), shard.stateArgs.end());
  pm.addPass(createShardOptimizer(zero));
}

/// Adds --ga-shard-parameters for `shard` (after the rewrite).
static void buildShardParameters(OpPassManager &pm, StringRef funcName,
                                 const ShardParameters &shard) {
  auto fsdp = getShardOptions<ShardParametersOptions>(funcName, shard);
  fsdp.loss = shard.loss;
  fsdp.paramArgs.assign(shard.paramArgs.begin(), shard.paramArgs.end());
  fsdp.paramResults.assign(shard.paramResults.begin(),
                           shard.paramResults.end());
  fsdp.planOutput = shard.planOutput;
  fsdp.keepGathered.assign(shard.keepGathered.begin(),
                           shard.keepGathered.end());
  fsdp.reduceAfterLoop.assign(shard.reduceAfterLoop.begin(),
                              shard.reduceAfterLoop.end());
  pm.addPass(createShardParameters(fsdp));
}

/// Lowers `result.rewritten` for the target into `result.lowered`: the
/// in-place form when it holds, else the copying form.
static LogicalResult lower(const DriverOptions &options, DriverResult &result) {
  if (!options.inPlace.empty()) {
    result.lowered = lowerInPlaceQuietly(*result.rewritten, options);
    if (result.lowered)
      result.inPlace.assign(options.inPlace.begin(), options.inPlace.end());
  }
  if (result.lowered)
    return success();
  result.lowered = result.rewritten->clone();
  return runPasses(*result.lowered,
                   [&](OpPassManager &pm) { buildLowering(pm, options); });
}

LogicalResult mlir::ga::runDriver(ModuleOp module, const DriverOptions &options,
                                  DriverResult &result) {
  if (failed(checkCollectives(module, options)))
    return failure();
  OwningOpRef<ModuleOp> step = module.clone();
  if (!options.rewrite) {
    result.rewritten = std::move(step);
    if (options.target == DriverTarget::None)
      return success();
    return lower(options, result);
  }
  result.microBatches = options.microBatches;
  result.recompute = options.recompute;
  bool choose = options.microBatchSize || !options.maxMemory.empty();
  if (choose && failed(chooseMicroBatches(*step, options, result)))
    return failure();
  if (options.target == DriverTarget::Choice) {
    if (result.recompute.empty())
      result.recompute = "none";
    return success();
  }

  AccumulatePipelineOptions rewrite;
  getRewriteOptions(options, result.microBatches, result.recompute, rewrite);
  // Marked by the choice already.
  if (!choose)
    rewrite.batchArgs = toPairStrings(options.batchArgs);
  if (failed(runPasses(*step, [&](OpPassManager &pm) {
        buildMicroBatchRewritePipeline(pm, rewrite);
        if (options.shardOptimizer.world > 0)
          buildShardOptimizer(pm, options.funcName, options.shardOptimizer);
        if (options.shardParameters.world > 0)
          buildShardParameters(pm, options.funcName, options.shardParameters);
        // The GPU lowering overlaps the buckets' NCCL all-reduces with the
        // backward on the streams: they are formed before the results are
        // written in place, as the frontend formed them (the CPU forms
        // them in its lowering).
        if (options.target == DriverTarget::CUDA)
          buildBuckets(pm, options);
      })))
    return failure();
  if (result.recompute.empty())
    result.recompute = "none";
  result.rewritten = std::move(step);
  if (options.target == DriverTarget::Report)
    return runReport(module, *result.rewritten, options, result);
  if (options.target == DriverTarget::ShardPlan)
    return runShardPlan(*result.rewritten, options, result);
  if (options.target == DriverTarget::None)
    return success();
  return lower(options, result);
}
