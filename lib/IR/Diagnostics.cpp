//===- Diagnostics.cpp - stable codes on ga-mlir's diagnostics ------------===//
//
// Implements include/ga/IR/Diagnostics.h.
//
//===----------------------------------------------------------------------===//

#include "ga/IR/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::ga;

/// The key of the metadata dictionary that holds a diagnostic's code.
static constexpr llvm::StringLiteral kCodeKey = "ga.diagnostic_code";

StringRef mlir::ga::stringifyDiagnosticCode(DiagnosticCode code) {
  switch (code) {
#define GA_DIAGNOSTIC_CODE(Enumerator, Name)                                   \
  case DiagnosticCode::Enumerator:                                             \
    return Name;
#include "ga/IR/DiagnosticCodes.def"
  }
  llvm_unreachable("unknown diagnostic code");
}

std::optional<DiagnosticCode>
mlir::ga::symbolizeDiagnosticCode(StringRef name) {
  return llvm::StringSwitch<std::optional<DiagnosticCode>>(name)
#define GA_DIAGNOSTIC_CODE(Enumerator, Name)                                   \
  .Case(Name, DiagnosticCode::Enumerator)
#include "ga/IR/DiagnosticCodes.def"
      .Default(std::nullopt);
}

/// The code dictionary among `diag`'s metadata, or null.
static DictionaryAttr findCodeEntry(Diagnostic &diag,
                                    DiagnosticArgument **slot = nullptr) {
  for (DiagnosticArgument &argument : diag.getMetadata()) {
    if (argument.getKind() !=
        DiagnosticArgument::DiagnosticArgumentKind::Attribute)
      continue;
    auto dict = dyn_cast<DictionaryAttr>(argument.getAsAttribute());
    if (!dict || !dict.get(kCodeKey))
      continue;
    if (slot)
      *slot = &argument;
    return dict;
  }
  return nullptr;
}

void mlir::ga::setDiagnosticCode(Diagnostic &diag, DiagnosticCode code) {
  MLIRContext *context = diag.getLocation().getContext();
  auto entry = DictionaryAttr::get(
      context, {NamedAttribute(
                   StringAttr::get(context, kCodeKey),
                   StringAttr::get(context, stringifyDiagnosticCode(code)))});
  DiagnosticArgument *slot = nullptr;
  if (findCodeEntry(diag, &slot))
    *slot = DiagnosticArgument(entry);
  else
    diag.getMetadata().push_back(DiagnosticArgument(entry));
}

std::optional<DiagnosticCode> mlir::ga::getDiagnosticCode(Diagnostic &diag) {
  DictionaryAttr entry = findCodeEntry(diag);
  if (!entry)
    return std::nullopt;
  auto name = dyn_cast<StringAttr>(entry.get(kCodeKey));
  return name ? symbolizeDiagnosticCode(name.getValue()) : std::nullopt;
}

Diagnostic &mlir::ga::operator<<(Diagnostic &diag, DiagnosticCode code) {
  setDiagnosticCode(diag, code);
  return diag;
}

InFlightDiagnostic &mlir::ga::operator<<(InFlightDiagnostic &diag,
                                         DiagnosticCode code) {
  if (Diagnostic *underlying = diag.getUnderlyingDiagnostic())
    setDiagnosticCode(*underlying, code);
  return diag;
}

InFlightDiagnostic &&mlir::ga::operator<<(InFlightDiagnostic &&diag,
                                          DiagnosticCode code) {
  if (Diagnostic *underlying = diag.getUnderlyingDiagnostic())
    setDiagnosticCode(*underlying, code);
  return std::move(diag);
}

InFlightDiagnostic mlir::ga::emitGAError(Location loc, DiagnosticCode code) {
  InFlightDiagnostic diag = emitError(loc);
  diag << code;
  return diag;
}
