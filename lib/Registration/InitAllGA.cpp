//===- InitAllGA.cpp - register everything ga-mlir provides ---------------===//
//
// Implements ga/InitAllGA.h: the `ga` dialect, what the ga pipelines need
// from upstream, and the ga passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "ga/Codegen/CPU/Passes.h"
#include "ga/Codegen/Common/Passes.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <mutex>

void mlir::ga::registerAllGA(DialectRegistry &registry) {
  registerAllGADialects(registry);
  registerGAPipelineDependencies(registry);
  // The global pass registry rejects a second registration of a name.
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllGAPasses();
    registerAllGAPipelines();
  });
}

void mlir::ga::registerAllGADialects(DialectRegistry &registry) {
  registry.insert<GADialect>();
  registerMPIMemoryEffectModels(registry);
}

void mlir::ga::registerGAPipelineDependencies(DialectRegistry &registry) {
  // The dialects come with their interface models (bufferization, ...).
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

void mlir::ga::registerAllGAPasses() {
  registerGAPasses();
  registerGAConversionPasses();
  registerGACodegenCommonPasses();
  registerGACodegenCPUPasses();
  registerGACodegenGPUPasses();
}

void mlir::ga::registerAllGAPipelines() { registerGAPipelines(); }
