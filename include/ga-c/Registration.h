//===- Registration.h - C API of ga-mlir --------------------------*- C -*-===//
//
// The C interface of ga-mlir, in the style of the upstream MLIR C API
// (`mlir-c/`): a dialect handle for the `ga` dialect, registration of the ga
// passes and pipelines, and one convenience entry point that parses IR text,
// runs a pass pipeline on it and hands back the result or the diagnostics.
//
// Everything here is exported from the shared library `libGACAPI.so`, which
// also carries the core of the upstream MLIR C API (`mlirContextCreate`,
// `mlirDialectHandleInsertDialect`, `mlirPassManagerCreate`, ...): Debian
// ships that C API only as static archives, so a C or Python client of
// ga-mlir links this one library (plus libMLIR.so, which it depends on).
//
//===----------------------------------------------------------------------===//

#ifndef GA_C_REGISTRATION_H
#define GA_C_REGISTRATION_H

#include "ga-c/Diagnostics.h"

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// `mlirGetDialectHandle__ga__()`: the handle of the `ga` dialect, for
/// `mlirDialectHandleInsertDialect(handle, registry)` and
/// `mlirDialectHandleLoadDialect(handle, context)`.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(GA, ga);

/// Everything ga-mlir needs, in one call (`mlir::ga::registerAllGA`): adds
/// the `ga` dialect and everything the ga pipelines use (every upstream
/// dialect with the external models of its interfaces, such as the
/// bufferization models, the dialect extensions and the LLVM IR
/// translations) to `registry`, and registers the ga passes and pipelines
/// (once per process) so that textual pipelines can name them. Upstream
/// passes are not registered (see `mlirGARegisterAllPasses`).
MLIR_CAPI_EXPORTED void mlirGARegisterAll(MlirDialectRegistry registry);

/// Adds the `ga` dialect to `registry` (only it: the ga pipelines need more,
/// see `mlirGARegisterAll`).
MLIR_CAPI_EXPORTED void mlirGARegisterDialect(MlirDialectRegistry registry);

/// Adds every dialect, dialect extension and LLVM IR translation that
/// `ga-opt` knows (all upstream ones plus `ga`) to `registry`.
MLIR_CAPI_EXPORTED void mlirGARegisterAllDialects(MlirDialectRegistry registry);

/// Registers the ga passes (`ga-micro-batch`, `ga-expand-accumulate`, ...)
/// with the global pass registry, so that textual pipelines can name them.
/// Call at most once per process (or use `mlirGARegisterAll`).
MLIR_CAPI_EXPORTED void mlirGARegisterPasses(void);

/// Registers the ga pipelines (`ga-accumulate`, `ga-lower-to-cpu`, ...) with
/// the global pass registry.
MLIR_CAPI_EXPORTED void mlirGARegisterPipelines(void);

/// Registers every upstream pass and the ga passes and pipelines: what
/// `ga-opt` registers. Safe to call more than once.
MLIR_CAPI_EXPORTED void mlirGARegisterAllPasses(void);

/// Parses `input` (MLIR text or bytecode) in a fresh context with every
/// dialect of `ga-opt`, runs the textual pass pipeline `pipeline` on it (for
/// example `ga-accumulate{micro-batches=4},canonicalize`, or anchored:
/// `builtin.module(func.func(ga-cleanup))`; empty runs no pass) with the
/// verifier on, and prints the resulting module in its custom form.
///
/// On success `outputCallback` is called once with the printed module; on
/// failure it is not called. In both cases `diagnosticCallback` is called
/// once per diagnostic with its located text (`<input>:3:7: error: ...`, the
/// source line, attached notes, but no dump of the operation), warnings and
/// remarks included; an invalid pipeline string is reported the same way.
/// Either callback may be NULL. `userData` is passed to both.
///
/// Returns success if parsing, every pass and the final verification
/// succeeded. Registers all passes on first use (see
/// `mlirGARegisterAllPasses`); thread-safe otherwise.
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirGARunPipeline(MlirStringRef input, MlirStringRef pipeline,
                  MlirStringCallback outputCallback,
                  MlirStringCallback diagnosticCallback, void *userData);

/// `mlirGARunPipeline` with the name of the input's buffer: diagnostics and
/// the locations of the parsed IR say `bufferName` (the user's file, e.g.
/// `step.mlir:3:7: error: ...`) instead of `<input>`.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirGARunPipelineNamed(
    MlirStringRef input, MlirStringRef bufferName, MlirStringRef pipeline,
    MlirStringCallback outputCallback, MlirStringCallback diagnosticCallback,
    void *userData);

/// `mlirGARunPipelineNamed` with each diagnostic as an `MlirGADiagnostic`
/// (include/ga-c/Diagnostics.h): its stable code, location and words beside
/// its rendering.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirGARunPipelineWithDiagnostics(
    MlirStringRef input, MlirStringRef bufferName, MlirStringRef pipeline,
    MlirStringCallback outputCallback,
    MlirGADiagnosticCallback diagnosticCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif // GA_C_REGISTRATION_H
