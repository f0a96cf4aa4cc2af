//===- GpuObjects.h - C API: the objects of gpu.binary ops --------*- C -*-===//
//
// Reads and replaces the objects (`#gpu.object<target, format, bytes>`) of
// the `gpu.binary` ops of a lowered module through the parsed IR, so that a
// client that post-processes device code (ga-compile bundling PTX into a
// fatbin for several chips) never edits printed IR. Exported from
// libGACAPI.so.
//
//===----------------------------------------------------------------------===//

#ifndef GA_C_GPUOBJECTS_H
#define GA_C_GPUOBJECTS_H

#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One object of a `gpu.binary`, as mlirGARewriteGpuObjects shows it.
typedef struct MlirGAGpuObject {
  /// The symbol name of the `gpu.binary` that holds it.
  MlirStringRef binary;
  /// Its target attribute as MLIR prints it (e.g. `#nvvm.target<chip =
  /// "sm_80">`).
  MlirStringRef target;
  /// Its format: `offload`, `assembly` (PTX), `bin` (a cubin) or `fatbin`.
  MlirStringRef format;
  /// Its bytes.
  MlirStringRef data;
} MlirGAGpuObject;

/// Called once per object, binaries and their objects in module order. To
/// replace the object by a fatbin, set `*fatbin` to its bytes (they must stay
/// valid until mlirGARewriteGpuObjects returns); leave it empty to keep the
/// object. Returning failure stops the rewrite (mlirGARewriteGpuObjects then
/// fails and prints nothing).
typedef MlirLogicalResult (*MlirGAGpuObjectCallback)(
    const MlirGAGpuObject *object, MlirStringRef *fatbin, void *userData);

/// Parses `input` (a module; `bufferName` names it in diagnostics), hands
/// every object of its `gpu.binary` ops to `objectCallback`, replaces those
/// it returns bytes for by a `fatbin` object with the same target,
/// properties and kernel table, and prints the module through
/// `outputCallback` (possibly in several pieces). Failure, with a diagnostic
/// through `diagnosticCallback` (may be null), when the module does not
/// parse or the callback fails; `numObjects` (may be null) receives the
/// number of objects replaced.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirGARewriteGpuObjects(
    MlirStringRef input, MlirStringRef bufferName,
    MlirGAGpuObjectCallback objectCallback, MlirStringCallback outputCallback,
    MlirStringCallback diagnosticCallback, void *userData,
    intptr_t *numObjects);

#ifdef __cplusplus
}
#endif

#endif // GA_C_GPUOBJECTS_H
