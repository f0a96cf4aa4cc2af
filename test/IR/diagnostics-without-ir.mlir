// Errors on bad input are a location and a message, with no IR printed:
// ga-opt turns MLIR's --mlir-print-op-on-diagnostic off by default (it would
// print the op after every error: the whole function for an error at a
// function), and the ga dialect is loaded with func, so that `ga.batch` on a
// step with no ga op is checked while parsing, not by the verifier after the
// first pass (which printed the function).
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not ga-opt %t/batch.mlir 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not ga-opt %t/batch.mlir --ga-accumulate=micro-batches=2 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: batch.mlir:1:1: error: 'func.func' op argument #0: batch dimension 2 is out of range for 'tensor<3xf32>'
// BATCH-NOT: see current operation
// BATCH-NOT: "func.return"

// An error of a pass at a function (an option it cannot use).
// RUN: not ga-opt %t/step.mlir --ga-lower-to-nvvm="chip=sm_90 format=isa block-size=1000" 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: step.mlir:1:1: error: block-size must be a multiple of 32 in [32, 1024], got 1000
// STEP-NOT: see current operation
// STEP-NOT: "func.return"

// The op is printed on request.
// RUN: not ga-opt %t/step.mlir --ga-lower-to-nvvm="chip=sm_90 format=isa block-size=1000" --mlir-print-op-on-diagnostic=true 2>&1 | FileCheck %s --check-prefix=PRINTED
// PRINTED: see current operation

//--- batch.mlir
func.func @too_small(%x: tensor<3xf32> {ga.batch = 2 : i64}) {
  return
}

//--- step.mlir
func.func @step(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
