//===- Driver.cpp - C API: compile a training step in one call ------------===//
//
// Implements include/ga-c/Driver.h over mlir::ga::runDriver.
//
//===----------------------------------------------------------------------===//

#include "ga-c/Driver.h"

#include "InputSession.h"

#include "ga/Driver/Driver.h"
#include "ga/Memory/ByteCount.h"
#include "ga/Transforms/Passes.h"

#include "mlir/CAPI/Support.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;
using namespace mlir::ga;

void mlirGACompileOptionsInit(MlirGACompileOptions *options) {
  *options = MlirGACompileOptions{};
  options->allowGhostBatch = -1;
  options->recomputeStatistics = -1;
  options->fuse = -1;
  options->target = MlirGATargetCPU;
  for (int *flag :
       {&options->blas, &options->fuseElementwise, &options->staticTemporaries,
        &options->openmp, &options->splitRowReductions,
        &options->approximateMath, &options->shareBuffers, &options->cInterface,
        &options->outParams})
    *flag = -1;
  options->vectorWidth = -1;
  options->numThreads = -1;
  options->minParallelWork = -1;
  options->rewrite = -1;
  options->fsdpLoss = -1;
  options->reportShardBegin = -1;
  options->reportShardEnd = -1;
  MlirGANVVMOptions &nvvm = options->nvvm;
  for (int *flag : {&nvvm.fuseElementwise, &nvvm.foldUnitDims, &nvvm.fuseRows,
                    &nvvm.fuseSiblings, &nvvm.recomputeShared, &nvvm.fma,
                    &nvvm.cublas, &nvvm.cudaGraphs, &nvvm.cInterface})
    *flag = -1;
  for (int64_t *count :
       {&nvvm.optLevel, &nvvm.blockSize, &nvvm.gemmTile, &nvvm.gemmMinReduction,
        &nvvm.splitReductionMin, &nvvm.splitRowReductionMin, &nvvm.rowWarpMin,
        &nvvm.rowBlockMin, &nvvm.rowMinRows})
    *count = -1;
}

/// `count` flattened pairs of `data`.
static SmallVector<IndexPair> toPairs(const int64_t *data, intptr_t count) {
  SmallVector<IndexPair> pairs;
  for (intptr_t i = 0; i < count; ++i)
    pairs.emplace_back(data[2 * i], data[2 * i + 1]);
  return pairs;
}

/// Sets `option` to `value` unless it is -1 (the default).
template <typename OptionT, typename T>
static void setUnlessDefault(OptionT &option, T value) {
  if (value != -1)
    option = value;
}

/// Sets `option` to `value` unless it is empty (the default).
static void setUnlessEmpty(GPUOption<std::string> &option,
                           MlirStringRef value) {
  if (value.length)
    option = unwrap(value).str();
}

/// The C options of the GPU lowering as the pipeline's.
static void unwrapNVVMOptions(const MlirGANVVMOptions &c,
                              LowerToNVVMOptions &nvvm) {
  setUnlessEmpty(nvvm.chip, c.chip);
  setUnlessEmpty(nvvm.features, c.features);
  setUnlessEmpty(nvvm.format, c.format);
  setUnlessEmpty(nvvm.ptxasOptions, c.ptxasOptions);
  if (c.optLevel != -1)
    nvvm.optLevel = static_cast<int>(c.optLevel);
  for (auto [option, value] :
       {std::pair(&nvvm.blockSize, c.blockSize),
        std::pair(&nvvm.gemmTile, c.gemmTile),
        std::pair(&nvvm.gemmMinReduction, c.gemmMinReduction),
        std::pair(&nvvm.splitReductionMin, c.splitReductionMin),
        std::pair(&nvvm.splitRowReductionMin, c.splitRowReductionMin),
        std::pair(&nvvm.rowWarpMin, c.rowWarpMin),
        std::pair(&nvvm.rowBlockMin, c.rowBlockMin),
        std::pair(&nvvm.rowMinRows, c.rowMinRows)})
    if (value != -1)
      *option = static_cast<unsigned>(value);
  for (auto [option, value] :
       {std::pair(&nvvm.fuseElementwise, c.fuseElementwise),
        std::pair(&nvvm.foldUnitDims, c.foldUnitDims),
        std::pair(&nvvm.fuseRows, c.fuseRows),
        std::pair(&nvvm.fuseSiblings, c.fuseSiblings),
        std::pair(&nvvm.recomputeShared, c.recomputeShared),
        std::pair(&nvvm.fma, c.fma), std::pair(&nvvm.cublas, c.cublas),
        std::pair(&nvvm.cudaGraphs, c.cudaGraphs),
        std::pair(&nvvm.cInterface, c.cInterface)})
    if (value != -1)
      *option = value != 0;
}

/// The C options as the driver's.
static void unwrapOptions(const MlirGACompileOptions &c,
                          DriverOptions &options) {
  if (c.funcName.length)
    options.funcName = unwrap(c.funcName).str();
  options.microBatches = c.microBatches;
  options.microBatchSize = c.microBatchSize;
  options.maxMemory = unwrap(c.maxMemory).str();
  options.batchArgs = toPairs(c.batchArgs, c.numBatchArgs);
  setUnlessDefault(options.allowGhostBatch, c.allowGhostBatch);
  setUnlessDefault(options.recomputeStatistics, c.recomputeStatistics);
  setUnlessDefault(options.fuse, c.fuse);
  options.accumulatorType = unwrap(c.accumulatorType).str();
  options.recompute = unwrap(c.recompute).str();
  options.inPlace = toPairs(c.inPlace, c.numInPlace);
  switch (c.target) {
  case MlirGATargetNone:
    options.target = DriverTarget::None;
    break;
  case MlirGATargetChoice:
    options.target = DriverTarget::Choice;
    break;
  case MlirGATargetCUDA:
    options.target = DriverTarget::CUDA;
    break;
  case MlirGATargetReport:
    options.target = DriverTarget::Report;
    break;
  case MlirGATargetShardPlan:
    options.target = DriverTarget::ShardPlan;
    break;
  default:
    options.target = DriverTarget::CPU;
  }
  unwrapNVVMOptions(c.nvvm, options.nvvm);
  options.rewrite = c.rewrite != 0;
  options.bucketSize = c.bucketSize;
  options.hostCollectives = c.hostCollectives > 0;
  options.mpiCollectives = c.mpiCollectives > 0;
  options.mpiImplementation = unwrap(c.mpiImplementation).str();
  options.mpiEntry = unwrap(c.mpiEntry).str();
  ShardOptimizer &shard = options.shardOptimizer;
  shard.rank = c.shardRank;
  shard.world = c.shardWorld;
  shard.params.assign(c.shardParams, c.shardParams + c.numShardParams);
  shard.stateResults.assign(c.shardStateResults,
                            c.shardStateResults + c.numShardStateResults);
  shard.stateArgs.assign(c.shardStateArgs,
                         c.shardStateArgs + c.numShardStateArgs);
  ShardParameters &fsdp = options.shardParameters;
  fsdp.rank = c.fsdpRank;
  fsdp.world = c.fsdpWorld;
  fsdp.loss = c.fsdpLoss;
  fsdp.paramArgs.assign(c.fsdpParamArgs, c.fsdpParamArgs + c.numFsdpParamArgs);
  fsdp.paramResults.assign(c.fsdpParamResults,
                           c.fsdpParamResults + c.numFsdpParamResults);
  fsdp.planOutput = unwrap(c.fsdpPlanOutput).str();
  fsdp.keepGathered.assign(c.fsdpKeepGathered,
                           c.fsdpKeepGathered + c.numFsdpKeepGathered);
  fsdp.reduceAfterLoop.assign(c.fsdpReduceAfterLoop,
                              c.fsdpReduceAfterLoop + c.numFsdpReduceAfterLoop);
  for (intptr_t i = 0; i < c.numReportRoles; ++i)
    options.reportRoles.push_back(unwrap(c.reportRoles[i]).str());
  if (c.reportShardBegin >= 0 && c.reportShardEnd >= 0)
    options.reportShard = {c.reportShardBegin, c.reportShardEnd};
  ShardPlanRequest &plan = options.shardPlan;
  plan.microBatches.assign(c.shardPlanMicroBatches,
                           c.shardPlanMicroBatches +
                               c.numShardPlanMicroBatches);
  plan.basePeaks.assign(c.shardPlanBasePeaks,
                        c.shardPlanBasePeaks + c.numShardPlanBasePeaks);
  plan.maxMemory = unwrap(c.shardPlanMaxMemory).str();
  options.memoryTarget = c.memoryTarget == MlirGATargetCUDA ? DriverTarget::CUDA
                                                            : DriverTarget::CPU;
  options.reservedBytes = c.reservedBytes;
  LowerToCPUOptions &cpu = options.cpu;
  setUnlessDefault(cpu.blas, c.blas);
  setUnlessDefault(cpu.fuseElementwise, c.fuseElementwise);
  setUnlessDefault(cpu.staticTemporaries, c.staticTemporaries);
  setUnlessDefault(cpu.openmp, c.openmp);
  setUnlessDefault(cpu.splitRowReductions, c.splitRowReductions);
  setUnlessDefault(cpu.approximateMath, c.approximateMath);
  setUnlessDefault(cpu.shareBuffers, c.shareBuffers);
  setUnlessDefault(cpu.cInterface, c.cInterface);
  setUnlessDefault(cpu.outParams, c.outParams);
  if (c.vectorWidth != -1)
    cpu.vectorWidth = static_cast<unsigned>(c.vectorWidth);
  if (c.numThreads != -1)
    cpu.numThreads = static_cast<unsigned>(c.numThreads);
  if (c.minParallelWork != -1)
    cpu.minParallelWork = static_cast<uint64_t>(c.minParallelWork);
}

/// Hands `result` to the caller's callback.
static void reportResult(const DriverResult &result,
                         MlirGACompileResultCallback resultCallback,
                         void *userData) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  if (ModuleOp module = result.lowered     ? *result.lowered
                        : result.rewritten ? *result.rewritten
                                           : ModuleOp())
    module->print(os);
  SmallVector<int64_t> inPlace;
  for (auto [first, second] : result.inPlace)
    inPlace.append({first, second});
  MlirGACompileResult view = {result.microBatches,
                              wrap(StringRef(result.recompute)),
                              result.predictedPeak.value_or(-1),
                              result.recomputeWork.value_or(-1),
                              inPlace.data(),
                              static_cast<intptr_t>(result.inPlace.size()),
                              wrap(StringRef(printed)),
                              wrap(StringRef(result.memoryReport)),
                              wrap(StringRef(result.shardPlan))};
  resultCallback(&view, userData);
}

MlirLogicalResult mlirGACompile(MlirStringRef input, MlirStringRef bufferName,
                                const MlirGACompileOptions *options,
                                MlirGACompileResultCallback resultCallback,
                                MlirGADiagnosticCallback diagnosticCallback,
                                void *userData) {
  return ga::capi::withParsedInput(
      input, bufferName, diagnosticCallback, userData,
      [&](ga::capi::InputSession &, ModuleOp module) -> LogicalResult {
        DriverOptions driverOptions;
        unwrapOptions(*options, driverOptions);
        DriverResult result;
        if (failed(runDriver(module, driverOptions, result)))
          return failure();
        if (resultCallback)
          reportResult(result, resultCallback, userData);
        return success();
      });
}

MlirLogicalResult mlirGAParseByteCount(MlirStringRef text, int64_t *bytes) {
  FailureOr<int64_t> parsed = mlir::ga::parseByteCount(unwrap(text));
  if (failed(parsed))
    return mlirLogicalResultFailure();
  *bytes = *parsed;
  return mlirLogicalResultSuccess();
}

MlirStringRef mlirGAGetRecomputeSets(void) {
  // Joined once: the returned reference outlives the call.
  static const std::string joined =
      llvm::join(mlir::ga::getRecomputeSets(), ",");
  return wrap(StringRef(joined));
}
