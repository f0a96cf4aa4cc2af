//===- Diagnostics.h - C API: ga-mlir's diagnostics as data -------*- C -*-===//
//
// A diagnostic of ga-mlir as a structure: its severity, its stable code (the
// names of include/ga/IR/DiagnosticCodes.def; empty for a diagnostic that has
// none, such as one of an upstream pass), where it is, its words and its
// rendering as ga-opt prints it. Clients decide what a diagnostic means from
// its code, never from its words.
//
//===----------------------------------------------------------------------===//

#ifndef GA_C_DIAGNOSTICS_H
#define GA_C_DIAGNOSTICS_H

#include "mlir-c/Diagnostics.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One diagnostic, valid for the duration of the callback it is given to.
typedef struct MlirGADiagnostic {
  /// Error, warning, note or remark.
  MlirDiagnosticSeverity severity;
  /// The stable code ("batch-coupling"), or empty.
  MlirStringRef code;
  /// The file, line and column of the innermost file location of the
  /// diagnostic's location (file empty and line 0 when it has none).
  MlirStringRef file;
  unsigned line;
  unsigned column;
  /// The diagnostic's words, without location and notes.
  MlirStringRef message;
  /// The diagnostic as ga-opt prints it: location, severity, words, source
  /// line and caret where the buffer is known, attached notes.
  MlirStringRef rendered;
} MlirGADiagnostic;

/// Receives each diagnostic of a call, in the order they were emitted.
typedef void (*MlirGADiagnosticCallback)(const MlirGADiagnostic *diagnostic,
                                         void *userData);

#ifdef __cplusplus
}
#endif

#endif // GA_C_DIAGNOSTICS_H
