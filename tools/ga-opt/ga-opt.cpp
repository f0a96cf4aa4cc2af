//===- ga-opt.cpp - mlir-opt with the ga dialect and passes ---------------===//
//
// Everything upstream mlir-opt registers (dialects, passes, extensions, LLVM IR
// translations), plus the ga dialect, passes, pipelines and test passes.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::ga::test {
void registerTestGAPasses();
void registerTestMemoryUsagePass();
} // namespace mlir::ga::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::ga::test::registerTestGAPasses();
  mlir::ga::test::registerTestMemoryUsagePass();

  // The ga dialect, every upstream dialect, extension and translation, and
  // the ga passes and pipelines.
  mlir::DialectRegistry registry;
  mlir::ga::registerAllGA(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ga-mlir optimizer driver\n", registry));
}
