//===- Verify.cpp - C API of ga-verify ------------------------------------===//
//
// Implements include/ga-c/Verify.h on top of the GAVerify library.
//
//===----------------------------------------------------------------------===//

#include "ga-c/Verify.h"

#include "InputSession.h"
#include "ga-c/Registration.h"

#include "ga/Verify/Inputs.h"
#include "ga/Verify/Verify.h"

#include "mlir/CAPI/Support.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>

using namespace mlir;

void mlirGAVerifyToleranceRule(uint32_t *perturbedRuns,
                               double *boundsPerComparison,
                               double *spreadsPerComparison) {
  *perturbedRuns = ga::verify::kPerturbedRuns;
  *boundsPerComparison = ga::verify::kBoundsPerComparison;
  *spreadsPerComparison = ga::verify::kSpreadsPerComparison;
}

void mlirGAVerifyOptionsInit(MlirGAVerifyOptions *options) {
  ga::verify::VerifyOptions defaults;
  options->microBatches = defaults.microBatches;
  options->seed = defaults.seed;
  options->numSeeds = defaults.numSeeds;
  options->rtol = -1;
  options->atol = defaults.atol;
  options->pipeline = mlirStringRefCreate(nullptr, 0);
  options->funcName = mlirStringRefCreate(nullptr, 0);
  options->lowerOptions = mlirStringRefCreate(nullptr, 0);
  options->inputName = mlirStringRefCreate(nullptr, 0);
}

int mlirGAVerify(MlirStringRef input, const MlirGAVerifyOptions *options,
                 MlirStringCallback reportCallback, void *userData) {
  mlirGARegisterAllPasses();
  static std::once_flag targetOnce;
  std::call_once(targetOnce, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });

  auto text = [](MlirStringRef ref) {
    return ref.data ? unwrap(ref).str() : std::string();
  };
  ga::verify::VerifyOptions verify;
  verify.inputName =
      options->inputName.length ? text(options->inputName) : "<input>";
  verify.microBatches = options->microBatches;
  verify.seed = options->seed;
  verify.numSeeds = options->numSeeds;
  if (options->rtol >= 0)
    verify.rtol = options->rtol;
  verify.atol = options->atol;
  verify.pipeline = text(options->pipeline);
  verify.funcName = text(options->funcName);
  verify.runner.lowerOptions = text(options->lowerOptions);
  verify.json = true;

  std::string report;
  llvm::raw_string_ostream reportStream(report);
  int status = ga::verify::runVerificationIsolated(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(input), verify.inputName),
      verify, reportStream);
  if (reportCallback)
    reportCallback(wrap(StringRef(report)), userData);
  return status;
}

MlirLogicalResult
mlirGADrawInputs(MlirStringRef input, MlirStringRef bufferName,
                 MlirStringRef funcName, uint64_t seed, int64_t dynamicSize,
                 MlirGAArrayCallback arrayCallback,
                 MlirStringCallback diagnosticCallback, void *userData) {
  return ga::capi::withParsedInput(
      input, bufferName, diagnosticCallback, userData,
      [&](ga::capi::InputSession &session, ModuleOp module) -> LogicalResult {
        auto step = ga::verify::findStep(module, unwrap(funcName));
        if (!step)
          return emitError(session.getFileLocation())
                 << llvm::toString(step.takeError());
        if (dynamicSize < 1)
          return emitError(step->getLoc())
                 << "the size of dynamic dimensions must be >= 1, got "
                 << dynamicSize;
        auto inputs = ga::verify::describeInputs(*step, /*intRange=*/"");
        if (!inputs)
          return emitError(step->getLoc())
                 << llvm::toString(inputs.takeError());
        std::vector<ga::verify::HostArray> arrays = ga::verify::makeInputs(
            inputs->args, inputs->specs, seed, dynamicSize, /*dump=*/false);
        if (!arrayCallback)
          return success();
        for (auto [i, array] : llvm::enumerate(arrays)) {
          std::string type = ga::verify::typeToString(inputs->args[i].type);
          // A scalar's bytes: exactly one element (makeInputs pads nothing
          // else).
          intptr_t numBytes =
              array.numElements() * ga::verify::elemSize(array.kind);
          arrayCallback(static_cast<intptr_t>(i), wrap(llvm::StringRef(type)),
                        static_cast<intptr_t>(array.shape.size()),
                        array.shape.data(), array.bytes.data(), numBytes,
                        userData);
        }
        return success();
      });
}
