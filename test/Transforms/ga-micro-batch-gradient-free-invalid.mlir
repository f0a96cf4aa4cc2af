// RUN: ga-opt %s -ga-micro-batch="micro-batches=2" -verify-diagnostics -split-input-file

// The counterpart of ga-micro-batch-gradient-free.mlir: the statistic is a
// float sum of the activations, so a gradient flows through it; without
// recompute-statistics the coupling stays refused, at its per-sample user.
func.func @sum(%w: tensor<3x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  // expected-note@+1 {{the value is reduced over the batch here}}
  %n = linalg.reduce { arith.addf } ins(%h : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %nb = linalg.broadcast ins(%n : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  // expected-error@+2 {{batch coupling: per-sample computation uses a value reduced over the whole batch}}
  // expected-note@+1 {{it depends on parameters}}
  %c = linalg.mul ins(%h, %nb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c : tensor<8x3xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  return %l : tensor<f32>
}
