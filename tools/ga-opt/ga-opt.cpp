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

#include <vector>

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

  // An error at an op is its location and message: MLIR's default also
  // prints the op (for a function, the whole function) after every error,
  // which buries the message. --mlir-print-op-on-diagnostic=true restores it.
  std::vector<char *> args(argv, argv + argc);
  static char noOpOnDiagnostic[] = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(args, [](const char *arg) {
        return llvm::StringRef(arg).contains("mlir-print-op-on-diagnostic");
      }))
    args.insert(args.begin() + 1, noOpOnDiagnostic);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(static_cast<int>(args.size()), args.data(),
                        "ga-mlir optimizer driver\n", registry));
}
