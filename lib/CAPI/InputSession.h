//===- InputSession.h - a C API call's context ------------------*- C++ -*-===//
//
// What every C API entry point that reads IR text needs, in one place: a
// context with the dialects of ga-mlir's pipelines, the input in a source
// manager under the caller's buffer name, and each diagnostic rendered like
// ga-opt renders it (location, source line, caret) and handed to the caller's
// callback, with no operation dump.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CAPI_INPUTSESSION_H
#define GA_LIB_CAPI_INPUTSESSION_H

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

  MLIRContext &getContext() { return context; }

  /// The input parsed as a module; null after a located parse error.
  OwningOpRef<ModuleOp> parse();

  /// Where errors about the input as a whole go: its first line (the
  /// implicit module of a parsed file sits at line 0, which renders without
  /// the caller's file).
  Location getFileLocation();

  /// Hands `text` to the caller's diagnostic callback (if any).
  void report(llvm::StringRef text);

private:
  /// Exposes the handler's rendering of one diagnostic.
  struct Renderer : public SourceMgrDiagnosticHandler {
    using SourceMgrDiagnosticHandler::emitDiagnostic;
    using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
  };

  MLIRContext context;
  std::string bufferName;
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  MlirStringCallback diagnosticCallback;
  void *userData;
  std::string rendered;
  llvm::raw_string_ostream renderedStream;
  Renderer renderer;
  ScopedDiagnosticHandler forwarder;
};

} // namespace mlir::ga::capi

#endif // GA_LIB_CAPI_INPUTSESSION_H
