//===- Inspect.h - C API: what a module's functions declare -------*- C -*-===//
//
// Reads what a caller needs to know of one function of a module (its
// argument and result types, the number of micro-batches a pass chose for
// it) from the parsed IR, so that clients never scrape printed IR with
// regular expressions. Exported from libGACAPI.so.
//
//===----------------------------------------------------------------------===//

#ifndef GA_C_INSPECT_H
#define GA_C_INSPECT_H

#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What mlirGAInspectFunction found.
typedef struct MlirGAFunctionInfo {
  /// The number of arguments and results of the function's type.
  intptr_t numArguments;
  intptr_t numResults;
  /// The function's `ga.micro_batches` attribute (the N that
  /// --ga-choose-micro-batches chose), or -1 when it has none.
  int64_t microBatches;
} MlirGAFunctionInfo;

/// Called once per type of the function, arguments first then results, in
/// order: `isResult` is 0 for an argument and 1 for a result; `type` is the
/// type as MLIR prints it (e.g. `tensor<4x?xf32>`, `!llvm.ptr`). For a ranked
/// tensor, `elementType` is its element type as MLIR prints it and `shape`
/// its `rank` sizes (a dynamic one is INT64_MIN); for any other type, `rank`
/// is -1, `shape` null and `elementType` the type itself.
typedef void (*MlirGATypeCallback)(int isResult, MlirStringRef type,
                                   MlirStringRef elementType, intptr_t rank,
                                   const int64_t *shape, void *userData);

/// Parses `input` (a module; `bufferName` names it in diagnostics) and fills
/// `info` for the function `funcName` (any operation that implements
/// FunctionOpInterface and is a symbol of the module: `func.func`,
/// `llvm.func`, ...). `typeCallback` (may be null) receives its types.
/// Failure, with a diagnostic through `diagnosticCallback` (may be null),
/// when the module does not parse or has no such function.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirGAInspectFunction(
    MlirStringRef input, MlirStringRef bufferName, MlirStringRef funcName,
    MlirGAFunctionInfo *info, MlirGATypeCallback typeCallback,
    MlirStringCallback diagnosticCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif // GA_C_INSPECT_H
