//===- InitAllGA.cpp - register everything ga-mlir provides ---------------===//

#include "ga/InitAllGA.h"

#include "ga/Codegen/CPU/Passes.h"
#include "ga/Codegen/Common/Passes.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/Conversion/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::ga::registerAllGADialects(DialectRegistry &registry) {
  registry.insert<GADialect>();
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
