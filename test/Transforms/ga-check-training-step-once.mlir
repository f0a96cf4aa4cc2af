// RUN: ga-opt %s -verify-diagnostics -ga-check-training-step="micro-batches=2 allow-ghost-batch=true" \
// RUN:   -ga-micro-batch="micro-batches=2 allow-ghost-batch=true" -o /dev/null
// RUN: ga-opt %s -verify-diagnostics --ga-accumulate="micro-batches=2 allow-ghost-batch=true" -o /dev/null
// RUN: ga-opt %s --ga-accumulate="micro-batches=2 allow-ghost-batch=true" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=warning:

// The contract check reports the analysis' diagnostics; the rewrite that
// follows reuses the cached analysis and does not report them again: one
// warning per site (-verify-diagnostics fails on a second, unexpected one).
// CHECK: warning: ghost batch
func.func @batchnorm(%w: tensor<3x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<3xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{the statistic is reduced over the batch here}}
  %sum = linalg.reduce { arith.addf } ins(%h : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %mb = linalg.broadcast ins(%sum : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  // expected-warning @+1 {{ghost batch: per-sample computation uses a statistic of each micro-batch instead of the whole batch}}
  %c = linalg.sub ins(%h, %mb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c : tensor<8x3xf32>) outs(%s0 : tensor<f32>) dimensions = [0, 1]
  return %l, %sum : tensor<f32>, tensor<3xf32>
}
