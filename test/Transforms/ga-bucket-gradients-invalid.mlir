// RUN: ga-opt %s --ga-bucket-gradients --split-input-file -verify-diagnostics
// RUN: not ga-opt %s --ga-bucket-gradients="bucket-size=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SIZE

// SIZE: error: ga-bucket-gradients: bucket-size must be a positive number of bytes, got 0

// A collective in the micro-batch loop runs once per micro-batch (what a
// framework does without no_sync): not the deferred form the pass buckets.
func.func @in_loop(%x: tensor<8x4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-note @+1 {{inside this loop}}
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z) -> tensor<4xf32> {
    %xs = tensor.extract_slice %x[%i, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %p = linalg.reduce { arith.addf } ins(%xs : tensor<2x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0]
    // expected-error @+1 {{collective inside a loop body runs once per iteration: bucketing expects the deferred form, one collective per gradient after the micro-batch loop}}
    %r = ga.all_reduce <sum> %p : tensor<4xf32>
    %n = linalg.add ins(%a, %r : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %acc : tensor<4xf32>
}

// -----

shard.grid @dp(shape = 2)

func.func @shard_in_loop(%g: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{inside this loop}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %g) -> tensor<4xf32> {
    // expected-error @+1 {{collective inside a loop body runs once per iteration}}
    %s = shard.all_reduce %a on @dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
