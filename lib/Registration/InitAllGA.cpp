//===- InitAllGA.cpp - register everything ga-mlir provides ---------------===//

#include "ga/InitAllGA.h"

#include "ga/Codegen/CPU/Passes.h"
#include "ga/Codegen/Common/Passes.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

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
}

void mlir::ga::registerAllGAPasses() {
  registerGAPasses();
  registerGAConversionPasses();
  registerGACodegenCommonPasses();
  registerGACodegenCPUPasses();
  registerGACodegenGPUPasses();
}

void mlir::ga::registerAllGAPipelines() { registerGAPipelines(); }
