//===- InputSession.h - a C API call's context ------------------*- C++ -*-===//
//
// What every C API entry point that reads IR text needs, in one place: a
// context with the dialects of ga-mlir's pipelines, the input in a source
// manager under the caller's buffer name, and each diagnostic rendered like
// ga-opt renders it (location, source line, caret) and handed to the caller's
// callback (as text, or as an MlirGADiagnostic with its stable code), with no
// operation dump.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CAPI_INPUTSESSION_H
#define GA_LIB_CAPI_INPUTSESSION_H

#include "ga-c/Diagnostics.h"

#include "mlir-c/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::ga::capi {

/// The registry of everything ga-mlir's pipelines may load.
DialectRegistry getPipelineRegistry();

/// A context and a parsed input whose diagnostics go to a C callback.
class InputSession {
public:
  InputSession(MlirStringRef input, MlirStringRef bufferName,
               MlirStringCallback diagnosticCallback, void *userData);
  /// Diagnostics as structures, with their codes.
  InputSession(MlirStringRef input, MlirStringRef bufferName,
               MlirGADiagnosticCallback diagnosticCallback, void *userData);

  MLIRContext &getContext() { return context; }

  /// The input parsed as a module; null after a located parse error.
  OwningOpRef<ModuleOp> parse();

  /// Where errors about the input as a whole go: its first line (the
  /// implicit module of a parsed file sits at line 0, which renders without
  /// the caller's file).
  Location getFileLocation();

  /// Hands `text` to the caller's diagnostic callback (if any), as an error
  /// without location or code to a structured one.
  void report(llvm::StringRef text);

  /// Prints `module` to `outputCallback` (if any).
  void print(ModuleOp module, MlirStringCallback outputCallback);

private:
  /// Exposes the handler's rendering of one diagnostic.
  struct Renderer : public SourceMgrDiagnosticHandler {
    using SourceMgrDiagnosticHandler::emitDiagnostic;
    using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
  };

  InputSession(MlirStringRef input, MlirStringRef bufferName, void *userData);

  /// Renders `diag` and hands it to the caller.
  void forward(Diagnostic &diag);

  MLIRContext context;
  std::string bufferName;
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  MlirStringCallback diagnosticCallback = nullptr;
  MlirGADiagnosticCallback structuredCallback = nullptr;
  void *userData;
  std::string rendered;
  llvm::raw_string_ostream renderedStream;
  Renderer renderer;
  ScopedDiagnosticHandler forwarder;
};

/// The preamble of every entry point that works on parsed IR: a session over
/// the caller's input, buffer name, diagnostic callback (text or structured)
/// and user data, its input parsed, then `body(session, module)`. Returns
/// failure when the input does not parse (a located error) or `body` fails.
template <typename CallbackT, typename BodyT>
MlirLogicalResult withParsedInput(MlirStringRef input, MlirStringRef bufferName,
                                  CallbackT diagnosticCallback, void *userData,
                                  BodyT &&body) {
  InputSession session(input, bufferName, diagnosticCallback, userData);
  OwningOpRef<ModuleOp> module = session.parse();
  if (!module || failed(body(session, *module)))
    return mlirLogicalResultFailure();
  return mlirLogicalResultSuccess();
}

} // namespace mlir::ga::capi

#endif // GA_LIB_CAPI_INPUTSESSION_H
