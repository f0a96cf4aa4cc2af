//===- InitAllGA.cpp - register everything ga-mlir provides ---------------===//
//
// Implements ga/InitAllGA.h: the `ga` dialect, what the ga pipelines need
// from upstream, and the ga passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Codegen/CPU/Passes.h"
#include "ga/Codegen/Common/AttentionDecomposition.h"
#include "ga/Codegen/Common/Passes.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Memory/Passes.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
  // The `ga.batch`, `ga.init` and `ga.range` argument attributes are checked
  // by the ga dialect, and MLIR checks a discardable attribute only when its
  // dialect is loaded. A step with no ga op does not load it while parsing:
  // an out-of-range `ga.batch` would pass the parser and fail the verifier
  // after the first pass instead (with the function printed). Loading ga
  // with func makes it a parse error at the argument.
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    context->getOrLoadDialect<GADialect>();
  });
  registerMPIMemoryEffectModels(registry);
  // How upstream ops relate to the batch, for the batch analysis.
  registerBatchTransferModels(registry);
  // ga.attention and its backward decompose into linalg ops on the CPU
  // (--ga-decompose-aggregated-ops).
  registerAttentionDecompositions(registry);
}

void mlir::ga::registerGAPipelineDependencies(DialectRegistry &registry) {
  // The dialects come with their interface models (bufferization, ...).
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

void mlir::ga::registerAllGAPasses() {
  registerGAPasses();
  registerGAMemoryPasses();
  registerGAConversionPasses();
  registerGACodegenCommonPasses();
  registerGACodegenCPUPasses();
  registerGACodegenGPUPasses();
}

void mlir::ga::registerAllGAPipelines() { registerGAPipelines(); }
