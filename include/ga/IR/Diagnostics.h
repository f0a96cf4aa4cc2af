//===- Diagnostics.h - stable codes on ga-mlir's diagnostics ----*- C++ -*-===//
//
// Every refusal of ga-mlir carries a stable code (DiagnosticCodes.def) beside
// its words, so that clients (the C API, the Python frontend) decide what a
// diagnostic means without reading its message. The code travels inside the
// mlir::Diagnostic as metadata, which no handler prints and every handler
// keeps: a dictionary {ga.diagnostic_code = "<name>"}. It is set where the
// diagnostic is emitted, by streaming the code:
//
//   return op->emitOpError() << DiagnosticCode::SamplesSelected
//                            << "slice drops the batch dimension";
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_DIAGNOSTICS_H
#define GA_IR_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::ga {

/// The stable codes of ga-mlir's diagnostics (see DiagnosticCodes.def).
enum class DiagnosticCode : uint32_t {
#define GA_DIAGNOSTIC_CODE(Enumerator, Name) Enumerator,
#include "ga/IR/DiagnosticCodes.def"
};

/// The stable name of `code` ("batch-coupling").
llvm::StringRef stringifyDiagnosticCode(DiagnosticCode code);

/// The code named `name`, if any.
std::optional<DiagnosticCode> symbolizeDiagnosticCode(llvm::StringRef name);

/// Records `code` on `diag` (replacing any code it had).
void setDiagnosticCode(Diagnostic &diag, DiagnosticCode code);

/// The code recorded on `diag`, if any.
std::optional<DiagnosticCode> getDiagnosticCode(Diagnostic &diag);

/// Streaming a code into a diagnostic records it (prints nothing).
Diagnostic &operator<<(Diagnostic &diag, DiagnosticCode code);
InFlightDiagnostic &operator<<(InFlightDiagnostic &diag, DiagnosticCode code);
InFlightDiagnostic &&operator<<(InFlightDiagnostic &&diag, DiagnosticCode code);

/// An error at `loc` carrying `code`.
InFlightDiagnostic emitGAError(Location loc, DiagnosticCode code);

} // namespace mlir::ga

#endif // GA_IR_DIAGNOSTICS_H
