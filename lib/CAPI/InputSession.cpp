//===- InputSession.cpp - one C API call's context and diagnostics --------===//
//
// Implements lib/CAPI/InputSession.h.
//
//===----------------------------------------------------------------------===//

#include "InputSession.h"

#include "ga-c/Registration.h"

#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::ga::capi;

DialectRegistry mlir::ga::capi::getPipelineRegistry() {
  DialectRegistry registry;
  mlirGARegisterAllDialects(wrap(&registry));
  return registry;
}

InputSession::InputSession(MlirStringRef input, MlirStringRef bufferName,
                           MlirStringCallback diagnosticCallback,
                           void *userData)
    : context(getPipelineRegistry()), bufferName(unwrap(bufferName).str()),
      sourceMgr(std::make_shared<llvm::SourceMgr>()),
      diagnosticCallback(diagnosticCallback), userData(userData),
      renderedStream(rendered), renderer(*sourceMgr, &context, renderedStream),
      forwarder(&context, [this](Diagnostic &diag) {
        rendered.clear();
        renderer.emitDiagnostic(diag);
        report(rendered);
        return success();
      }) {
  // The diagnostics are for the caller, not for debugging ga-mlir: no dump
  // of the operation under every diagnostic (ga-opt's default).
  context.printOpOnDiagnostic(false);
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(input), unwrap(bufferName)),
      llvm::SMLoc());
}

OwningOpRef<ModuleOp> InputSession::parse() {
  ParserConfig config(&context);
  return parseSourceFile<ModuleOp>(sourceMgr, config);
}

void InputSession::report(llvm::StringRef text) {
  if (diagnosticCallback)
    diagnosticCallback(wrap(text), userData);
}

Location InputSession::getFileLocation() {
  return FileLineColLoc::get(&context, bufferName, /*line=*/1, /*column=*/1);
}
