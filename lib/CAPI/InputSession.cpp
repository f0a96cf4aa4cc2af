//===- InputSession.cpp - one C API call's context and diagnostics --------===//
//
// Implements lib/CAPI/InputSession.h.
//
//===----------------------------------------------------------------------===//

#include "InputSession.h"

#include "ga-c/Registration.h"
#include "ga/IR/Diagnostics.h"

#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Location.h"
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
                           void *userData)
    : context(getPipelineRegistry()), bufferName(unwrap(bufferName).str()),
      sourceMgr(std::make_shared<llvm::SourceMgr>()), userData(userData),
      renderedStream(rendered), renderer(*sourceMgr, &context, renderedStream),
      forwarder(&context, [this](Diagnostic &diag) {
        forward(diag);
        return success();
      }) {
  // The diagnostics are for the caller, not for debugging ga-mlir: no dump
  // of the operation under every diagnostic (ga-opt's default).
  context.printOpOnDiagnostic(false);
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(input), unwrap(bufferName)),
      llvm::SMLoc());
}

InputSession::InputSession(MlirStringRef input, MlirStringRef bufferName,
                           MlirStringCallback diagnosticCallback,
                           void *userData)
    : InputSession(input, bufferName, userData) {
  this->diagnosticCallback = diagnosticCallback;
}

InputSession::InputSession(MlirStringRef input, MlirStringRef bufferName,
                           MlirGADiagnosticCallback diagnosticCallback,
                           void *userData)
    : InputSession(input, bufferName, userData) {
  structuredCallback = diagnosticCallback;
}

/// The C severity of `severity`.
static MlirDiagnosticSeverity wrapSeverity(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return MlirDiagnosticError;
  case DiagnosticSeverity::Warning:
    return MlirDiagnosticWarning;
  case DiagnosticSeverity::Note:
    return MlirDiagnosticNote;
  case DiagnosticSeverity::Remark:
    return MlirDiagnosticRemark;
  }
  llvm_unreachable("unknown diagnostic severity");
}

void InputSession::forward(Diagnostic &diag) {
  rendered.clear();
  renderer.emitDiagnostic(diag);
  if (!structuredCallback) {
    report(rendered);
    return;
  }
  std::optional<ga::DiagnosticCode> code = ga::getDiagnosticCode(diag);
  // The innermost file location: the first one a walk of the location meets
  // (a call site's callee comes before its caller).
  FileLineColLoc file;
  diag.getLocation()->walk([&](Location loc) {
    file = dyn_cast<FileLineColLoc>(loc);
    return file ? WalkResult::interrupt() : WalkResult::advance();
  });
  std::string message = diag.str();
  MlirGADiagnostic view = {
      wrapSeverity(diag.getSeverity()),
      wrap(code ? ga::stringifyDiagnosticCode(*code) : StringRef()),
      wrap(file ? file.getFilename().getValue() : StringRef()),
      file ? file.getLine() : 0,
      file ? file.getColumn() : 0,
      wrap(StringRef(message)),
      wrap(StringRef(rendered))};
  structuredCallback(&view, userData);
}

OwningOpRef<ModuleOp> InputSession::parse() {
  ParserConfig config(&context);
  return parseSourceFile<ModuleOp>(sourceMgr, config);
}

void InputSession::report(llvm::StringRef text) {
  if (diagnosticCallback)
    diagnosticCallback(wrap(text), userData);
  if (!structuredCallback)
    return;
  MlirGADiagnostic view = {
      MlirDiagnosticError, wrap(StringRef()), wrap(StringRef()), 0, 0,
      wrap(text),          wrap(text)};
  structuredCallback(&view, userData);
}

void InputSession::print(ModuleOp module, MlirStringCallback outputCallback) {
  if (!outputCallback)
    return;
  std::string output;
  llvm::raw_string_ostream outputStream(output);
  module->print(outputStream);
  outputCallback(wrap(StringRef(output)), userData);
}

Location InputSession::getFileLocation() {
  return FileLineColLoc::get(&context, bufferName, /*line=*/1, /*column=*/1);
}
