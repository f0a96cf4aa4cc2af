//===- Verify.cpp - C API of ga-verify ------------------------------------===//
//
// Implements include/ga-c/Verify.h on top of the GAVerify library.
//
//===----------------------------------------------------------------------===//

#include "ga-c/Verify.h"

#include "ga-c/Registration.h"
#include "ga/Verify/Verify.h"

#include "mlir/CAPI/Support.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>

using namespace mlir;

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
