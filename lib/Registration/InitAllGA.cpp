//===- InitAllGA.cpp - register everything ga-mlir provides ---------------===//

#include "ga/InitAllGA.h"

#include "ga/IR/GADialect.h"
#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::ga::registerAllGADialects(DialectRegistry &registry) {
  registry.insert<GADialect>();
}

void mlir::ga::registerAllGAPasses() { registerGAPasses(); }

void mlir::ga::registerAllGAPipelines() { registerGAPipelines(); }
