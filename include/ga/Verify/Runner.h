//===- Runner.h - compile and run a step on host arrays ---------*- C++ -*-===//
//
// ABI: a wrapper `func.func @__ga_verify_entry` is added to each module after
// the pipeline under test. It takes every argument of the step as a tensor
// (scalars as 0-d tensors), calls the step and returns every result as a
// tensor, and carries `llvm.emit_c_interface`. After bufferization all of its
// arguments and results are memref descriptors, so one generic caller
// (`_mlir_ciface___ga_verify_entry(results*, desc*...)`, through
// ExecutionEngine::invokePacked) serves every step signature.
//
// Two runners share that ABI: the in-process JIT (compile, JITRunner.cpp)
// and ahead-of-time libraries (openStepLibrary, LibraryRunner.cpp), whose step
// becomes a declaration the JIT-compiled wrapper calls. runStep
// (Isolation.cpp) runs the entry in a child process.
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_RUNNER_H
#define GA_VERIFY_RUNNER_H

#include "ga/Verify/Inputs.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ga::verify {

/// The name of the entry wrapper.
inline constexpr StringLiteral kEntryName = "__ga_verify_entry";

/// How the steps are lowered, compiled and run.
struct RunnerOptions {
  /// Options of ga-lower-to-cpu for both steps.
  std::string lowerOptions;
  /// Options of ga-lower-to-cpu for the rewritten step, if not lowerOptions.
  std::optional<std::string> rewrittenLowerOptions;
  /// Libraries the compiled steps may call.
  std::vector<std::string> sharedLibs;
  /// LLVM optimization level of the JIT (0-3).
  unsigned optLevel = 2;
  /// Runs per step on fresh copies of the inputs; the fastest is reported.
  unsigned repeat = 1;
  /// Run the steps in this process (a crash is not caught).
  bool noFork = false;
};

/// A step taken from an ahead-of-time library (see openStepLibrary).
struct LibraryStep {
  std::string path;
  std::string symbol;      // _mlir_ciface_<func>
  void *address = nullptr; // of `symbol` in the library
};

/// A compiled module ready to run.
struct Compiled {
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  std::string library; // where the step itself comes from, if not the JIT
};

/// Adds `func.func @__ga_verify_entry` that calls `step` with all arguments
/// and results as tensors (scalars as 0-d tensors) and a C interface.
void addEntryWrapper(ModuleOp module, func::FuncOp step);

/// Opens the shared library of the `which` step ("reference" or "rewritten")
/// and returns the address of `_mlir_ciface_<func>` in it.
llvm::Expected<void *> openStepLibrary(StringRef path, StringRef func,
                                       StringRef which);

/// Replaces the body of `step` by a declaration of the function its library
/// defines (see LibraryRunner.cpp).
LogicalResult externalizeStep(ModuleOp module, func::FuncOp step);

/// Lowers `module` (with its entry wrapper) with ga-lower-to-cpu and
/// JIT-compiles it. With `library`, the step in `module` is a declaration
/// (externalizeStep) whose C interface the library provides.
llvm::Expected<Compiled> compile(ModuleOp module, StringRef which,
                                 const LibraryStep *library,
                                 const RunnerOptions &options);

/// Calls the entry on copies of `inputs` (`repeat` times) and returns 'R', the
/// fastest run time in seconds and the serialized results of the last run, or
/// 'E' and a message if the results do not fit the step's result types.
std::string invokeEntry(Compiled &compiled,
                        const std::vector<HostArray> &inputs,
                        ArrayRef<Slot> results, unsigned repeat);

/// Reads what invokeEntry produced: the results and the run time in
/// `seconds`, or why they cannot be read.
llvm::Expected<std::vector<HostArray>>
deserializeResults(StringRef data, ArrayRef<Slot> results, double &seconds,
                   const Compiled &compiled, StringRef which);

/// Runs the entry on `inputs`, in a child process unless `options.noFork`,
/// and returns the results (a crash of the step is an error).
llvm::Expected<std::vector<HostArray>>
runStep(Compiled &compiled, const std::vector<HostArray> &inputs,
        ArrayRef<Slot> results, StringRef which, double &seconds,
        const RunnerOptions &options);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_RUNNER_H
