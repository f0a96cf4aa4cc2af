//===- ga-opt.cpp - mlir-opt with the ga dialect and passes ---------------===//
//
// Everything upstream mlir-opt registers (dialects, passes, extensions, LLVM IR
// translations), plus the ga dialect, passes, pipelines and test passes.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::ga::test {
void registerTestGAPasses();
void registerTestMemoryUsagePass();
} // namespace mlir::ga::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::ga::registerAllGAPasses();
  mlir::ga::registerAllGAPipelines();
  mlir::ga::test::registerTestGAPasses();
  mlir::ga::test::registerTestMemoryUsagePass();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::ga::registerAllGADialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ga-mlir optimizer driver\n", registry));
}
