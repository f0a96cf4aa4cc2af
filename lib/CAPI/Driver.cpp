//===- Driver.cpp - C API: compile a training step in one call ------------===//
//
// Implements include/ga-c/Driver.h over mlir::ga::runDriver.
//
//===----------------------------------------------------------------------===//

#include "ga-c/Driver.h"

#include "InputSession.h"

#include "ga/Driver/Driver.h"

#include "mlir/CAPI/Support.h"
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
  options.target = c.target == MlirGATargetNone     ? DriverTarget::None
                   : c.target == MlirGATargetChoice ? DriverTarget::Choice
                                                    : DriverTarget::CPU;
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
                              wrap(StringRef(printed))};
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
