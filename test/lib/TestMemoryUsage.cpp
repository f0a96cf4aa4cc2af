//===- TestMemoryUsage.cpp - print the memory-usage analysis --------------===//

#include "ga/Analysis/MemoryUsage.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::ga;

namespace {
/// Prints the memory use of every bufferized function definition; what the
/// analysis refuses is reported as its own diagnostics and fails the pass.
struct TestMemoryUsagePass
    : public PassWrapper<TestMemoryUsagePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestMemoryUsagePass)

  StringRef getArgument() const final { return "test-ga-memory-usage"; }
  StringRef getDescription() const final {
    return "Print the static memory use of every bufferized function";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      MemoryUsageAnalysis analysis(func);
      if (!analysis.succeeded())
        return signalPassFailure();
      analysis.print(llvm::outs());
    }
  }
};
} // namespace

namespace mlir::ga::test {
void registerTestMemoryUsagePass() { PassRegistration<TestMemoryUsagePass>(); }
} // namespace mlir::ga::test
