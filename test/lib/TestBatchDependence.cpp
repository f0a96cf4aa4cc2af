//===- TestBatchDependence.cpp - print the batch-dependence analysis ------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/IR/GADialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::ga;

namespace {
/// Prints the class of every value of each function that has per-sample
/// arguments; problems are reported as the analysis' own diagnostics.
struct TestBatchDependencePass
    : public PassWrapper<TestBatchDependencePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBatchDependencePass)

  TestBatchDependencePass() = default;
  TestBatchDependencePass(const TestBatchDependencePass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-ga-batch-dependence"; }
  StringRef getDescription() const final {
    return "Print the batch-dependence class of every value";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<GADialect>();
  }

  Option<bool> allowGhostBatch{*this, "allow-ghost-batch",
                               llvm::cl::desc("Accept ghost-batch couplings"),
                               llvm::cl::init(false)};

  Option<bool> recomputeStatistics{
      *this, "recompute-statistics",
      llvm::cl::desc("Compute coupled statistics in earlier loops"),
      llvm::cl::init(false)};

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      bool hasBatchArg = false;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        hasBatchArg |= !!func.getArgAttr(i, GADialect::getBatchAttrName());
      if (!hasBatchArg)
        continue;
      BatchDependence::Options options;
      options.allowGhostBatch = allowGhostBatch;
      options.recomputeStatistics = recomputeStatistics;
      BatchDependence analysis(func, options);
      analysis.report();
      analysis.print(llvm::outs());
    }
  }
};
} // namespace

namespace mlir::ga::test {
void registerTestGAPasses() { PassRegistration<TestBatchDependencePass>(); }
} // namespace mlir::ga::test
