//===- Verify.h - C API of ga-verify ------------------------------*- C -*-===//
//
// Verification of a rewrite from C (and from Python, ga_mlir.verify): run a
// training step as written and after a pipeline (by default
// `ga-accumulate{micro-batches=N}`) on the same seeded input sets and compare
// every result, as `ga-verify --json` does. Exported from libGACAPI.so.
//
//===----------------------------------------------------------------------===//

#ifndef GA_C_VERIFY_H
#define GA_C_VERIFY_H

#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The options of one verification; the flags of ga-verify of the same
/// names. Initialize with mlirGAVerifyOptionsInit, then set what differs.
typedef struct MlirGAVerifyOptions {
  /// --micro-batches (default 4).
  int64_t microBatches;
  /// --seed and --seeds: input sets seed, seed + 1, ... (default 0 and 3).
  uint64_t seed;
  uint32_t numSeeds;
  /// --rtol; negative: by element type (the default). --atol (default 0).
  double rtol;
  double atol;
  /// --pipeline (empty: ga-accumulate{micro-batches=N}), --func (empty: the
  /// step found by itself), --lower-options (options of ga-lower-to-cpu).
  MlirStringRef pipeline;
  MlirStringRef funcName;
  MlirStringRef lowerOptions;
  /// The name of the input in diagnostics and in the report (the user's
  /// file; empty: `<input>`).
  MlirStringRef inputName;
} MlirGAVerifyOptions;

/// Sets `options` to ga-verify's defaults.
MLIR_CAPI_EXPORTED void mlirGAVerifyOptionsInit(MlirGAVerifyOptions *options);

/// Verifies the training step in `input` (MLIR text): calls `reportCallback`
/// once with the report as one JSON document (the one of `ga-verify --json`:
/// `pass`, `error`, `results`, ...) and returns 0 if every result matched, 1
/// otherwise (a mismatch, or a step that cannot be verified: the report's
/// `error` says why; diagnostics also go to stderr). The verification runs
/// in a child process, so that a crash in the pipeline or in a compiled step
/// is reported, not fatal; call it from a thread that may fork. Registers all
/// passes on first use.
MLIR_CAPI_EXPORTED int mlirGAVerify(MlirStringRef input,
                                    const MlirGAVerifyOptions *options,
                                    MlirStringCallback reportCallback,
                                    void *userData);

#ifdef __cplusplus
}
#endif

#endif // GA_C_VERIFY_H
