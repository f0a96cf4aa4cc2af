//===- consumer-opt.cpp - a tool built on the installed ga-mlir -----------===//
//
// What a compiler that embeds ga-mlir does: one call registers the ga dialect,
// everything the ga pipelines need (upstream dialects with their bufferization
// models, extensions, translations) and the ga passes and pipelines; then
// MlirOptMain. The whole --ga-accumulate (with max-memory, which bufferizes
// copies of the step), --ga-memory-report and --ga-lower-to-cpu then run.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();

  mlir::DialectRegistry registry;
  mlir::ga::registerAllGA(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "ga-mlir consumer: upstream dialects + ga\n", registry));
}
