//===- Registration.cpp - C API of ga-mlir --------------------------------===//
//
// Implements include/ga-c/Registration.h on top of the C++ registration
// functions of ga/InitAllGA.h and upstream's InitAll*.h.
//
//===----------------------------------------------------------------------===//

#include "ga-c/Registration.h"

#include "InputSession.h"

#include "ga/IR/GADialect.h"
#include "ga/InitAllGA.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(GA, ga, mlir::ga::GADialect)

void mlirGARegisterAll(MlirDialectRegistry registry) {
  ga::registerAllGA(*unwrap(registry));
}

void mlirGARegisterDialect(MlirDialectRegistry registry) {
  ga::registerAllGADialects(*unwrap(registry));
}

void mlirGARegisterAllDialects(MlirDialectRegistry registry) {
  DialectRegistry &reg = *unwrap(registry);
  ga::registerGAPipelineDependencies(reg);
  ga::registerAllGADialects(reg);
}

void mlirGARegisterPasses(void) { ga::registerAllGAPasses(); }

void mlirGARegisterPipelines(void) { ga::registerAllGAPipelines(); }

void mlirGARegisterAllPasses(void) {
  // The global pass registry rejects a second registration of a name, so
  // register once per process.
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    DialectRegistry unused;
    ga::registerAllGA(unused);
  });
}

/// Parses `text` into `pm`: anchored (`builtin.module(...)`) or as a list of
/// passes and pipelines that runs on the module.
static LogicalResult parsePipeline(StringRef text, PassManager &pm,
                                   llvm::raw_ostream &errors) {
  text = text.trim();
  if (text.empty())
    return success();
  if (!text.starts_with(ModuleOp::getOperationName().str() + "("))
    return parsePassPipeline(text, pm, errors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(text, errors);
  if (failed(parsed))
    return failure();
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  return success();
}

MlirLogicalResult mlirGARunPipeline(MlirStringRef input, MlirStringRef pipeline,
                                    MlirStringCallback outputCallback,
                                    MlirStringCallback diagnosticCallback,
                                    void *userData) {
  return mlirGARunPipelineNamed(
      input, mlirStringRefCreateFromCString("<input>"), pipeline,
      outputCallback, diagnosticCallback, userData);
}

/// Parses the input of `session`, runs `pipeline` on it and prints the result
/// to `outputCallback`.
static MlirLogicalResult runPipeline(ga::capi::InputSession &session,
                                     MlirStringRef pipeline,
                                     MlirStringCallback outputCallback) {
  mlirGARegisterAllPasses();
  PassManager pm(&session.getContext(), ModuleOp::getOperationName());
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineErrorStream(pipelineErrors);
  if (failed(parsePipeline(unwrap(pipeline), pm, pipelineErrorStream))) {
    session.report("error: invalid pass pipeline '" + unwrap(pipeline).str() +
                   "': " + pipelineErrors);
    return mlirLogicalResultFailure();
  }

  OwningOpRef<ModuleOp> module = session.parse();
  if (!module || failed(pm.run(*module)))
    return mlirLogicalResultFailure();
  session.print(*module, outputCallback);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult mlirGARunPipelineNamed(MlirStringRef input,
                                         MlirStringRef bufferName,
                                         MlirStringRef pipeline,
                                         MlirStringCallback outputCallback,
                                         MlirStringCallback diagnosticCallback,
                                         void *userData) {
  ga::capi::InputSession session(input, bufferName, diagnosticCallback,
                                 userData);
  return runPipeline(session, pipeline, outputCallback);
}

MlirLogicalResult mlirGARunPipelineWithDiagnostics(
    MlirStringRef input, MlirStringRef bufferName, MlirStringRef pipeline,
    MlirStringCallback outputCallback,
    MlirGADiagnosticCallback diagnosticCallback, void *userData) {
  ga::capi::InputSession session(input, bufferName, diagnosticCallback,
                                 userData);
  return runPipeline(session, pipeline, outputCallback);
}
