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

/// ga-verify's rule for the derived tolerance of an element (without
/// --rtol/--atol): the smaller of `boundsPerComparison` times its rigorous
/// rounding-error bound (`@f_error_bound` of --ga-forward-error-bound) and
/// `spreadsPerComparison` times its spread, the largest distance from the
/// reference over `perturbedRuns` runs of `@f_perturbed` (seeds 1, 2, ...).
/// One definition for every caller that compares with it (the GPU kit).
MLIR_CAPI_EXPORTED void mlirGAVerifyToleranceRule(uint32_t *perturbedRuns,
                                                  double *boundsPerComparison,
                                                  double *spreadsPerComparison);

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

/// Called once per argument of the step, in order, with the argument's type
/// as MLIR prints it (`tensor<24x16xf32>`, `f32`, `tensor<?x16xf32>`), the
/// shape drawn (`rank` sizes; dynamic dimensions have the size asked for)
/// and its elements, row-major, in the type's element format (i1 and i8 one
/// byte, bf16 and f16 two, index eight).
typedef void (*MlirGAArrayCallback)(intptr_t index, MlirStringRef type,
                                    intptr_t rank, const int64_t *shape,
                                    const void *data, intptr_t numBytes,
                                    void *userData);

/// Draws the input set of `seed` for the step `funcName` (empty: the step
/// ga-verify would pick) of `input`, exactly as ga-verify does: per the
/// arguments' `ga.init` / `ga.range`, else by element type (see
/// docs/GAPasses.md); dynamic dimensions of size `dynamicSize`. Lets a caller
/// run a compiled step on the inputs the step declares valid (the second
/// moments of Adam positive, class indices in range) without a second copy
/// of the rules. Failure, with a diagnostic, when the module does not parse,
/// has no such step, or an argument cannot be drawn.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirGADrawInputs(
    MlirStringRef input, MlirStringRef bufferName, MlirStringRef funcName,
    uint64_t seed, int64_t dynamicSize, MlirGAArrayCallback arrayCallback,
    MlirStringCallback diagnosticCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif // GA_C_VERIFY_H
