//===- JITRunner.cpp - lower and JIT-compile a step in process ------------===//
//
// Lowers a module with its entry wrapper through ga-lower-to-cpu and compiles
// it with mlir::ExecutionEngine (in libMLIR.so), linking the MLIR runtime
// support library, OpenMP and a CBLAS where the lowering options need them.
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/Runner.h"

#include "ga/Pipelines/Pipelines.h"
#include "ga/Verify/Isolation.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ga::verify;

/// A shared library that exports cblas_sgemm: OpenBLAS, else the reference
/// BLAS (Debian's libblas.so.3 includes CBLAS). Empty if none is found.
static std::string findCBLAS() {
  for (const char *dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
        "/usr/lib", "/usr/local/lib"})
    for (const char *name : {"libopenblas.so.0", "libopenblas.so",
                             "libcblas.so.3", "libblas.so.3"}) {
      std::string path = std::string(dir) + "/" + name;
      if (llvm::sys::fs::exists(path))
        return path;
    }
  return "";
}

/// Lowers `module` to LLVM and JIT-compiles it. With `library`, the step in
/// `module` is a declaration (externalizeStep) whose C interface the library
/// provides.
llvm::Expected<Compiled>
mlir::ga::verify::compile(ModuleOp module, StringRef which,
                          const LibraryStep *library,
                          const RunnerOptions &runner) {
  setPhase("lowering the " + which + " step with ga-lower-to-cpu");
  PassManager pm(module.getContext());
  std::string optionText = which == "rewritten" && runner.rewrittenLowerOptions
                               ? *runner.rewrittenLowerOptions
                               : runner.lowerOptions;
  auto options = ga::LowerToCPUOptions::createFromString(optionText);
  if (!options)
    return llvm::createStringError("invalid ga-lower-to-cpu options '" +
                                   optionText + "'");
  // ga-verify calls its own wrapper: it needs no other C interface, and
  // takes results as return values (out-params=1 only changes how a caller
  // receives them, not what they are).
  options->cInterface = false;
  options->outParams = false;
  ga::buildLowerToCPUPipeline(pm, *options);
  if (failed(pm.run(module)))
    return llvm::createStringError(
        ("lowering the " + which +
         " step to the CPU (ga-lower-to-cpu) failed; see the diagnostics "
         "above")
            .str());
  setPhase("JIT-compiling the " + which + " step");
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(runner.optLevel, 0, nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(std::min(runner.optLevel, 3u));
  SmallVector<StringRef> libs;
  std::string runnerUtils =
      std::string(GA_MLIR_LIB_DIR) + "/libmlir_c_runner_utils.so";
  if (llvm::sys::fs::exists(runnerUtils))
    libs.push_back(runnerUtils);
  for (const std::string &lib : runner.sharedLibs)
    libs.push_back(lib);
  std::string omp = std::string(GA_MLIR_LIB_DIR) + "/libomp.so";
  if (options->openmp && llvm::sys::fs::exists(omp))
    libs.push_back(omp);
  std::string blas;
  if (options->blas && runner.sharedLibs.empty() && !library) {
    blas = findCBLAS();
    if (blas.empty())
      return llvm::createStringError(
          "blas=1 needs a CBLAS library (libopenblas0 or libblas3); none "
          "found, give one with --shared-libs");
    libs.push_back(blas);
  }
  engineOptions.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return llvm::createStringError(
        "JIT compilation of the " + which.str() +
        " step failed: " + llvm::toString(engine.takeError()));
  Compiled compiled;
  compiled.engine = std::move(*engine);
  if (library) {
    compiled.library = library->path;
    compiled.engine->registerSymbols([&](llvm::orc::MangleAndInterner mangle) {
      llvm::orc::SymbolMap symbols;
      symbols[mangle(library->symbol)] = {
          llvm::orc::ExecutorAddr::fromPtr(library->address),
          llvm::JITSymbolFlags::Exported};
      return symbols;
    });
  }
  auto entry =
      compiled.engine->lookupPacked(("_mlir_ciface_" + kEntryName).str());
  if (!entry)
    return llvm::createStringError(
        "the compiled " + which.str() +
        " step has no entry point: " + llvm::toString(entry.takeError()));
  compiled.entry = *entry;
  return compiled;
}
