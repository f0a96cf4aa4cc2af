// RUN: ga-opt %s -ga-micro-batch="micro-batches=2 recompute-statistics=true" | FileCheck %s
// RUN: ga-opt %s -test-ga-batch-dependence="recompute-statistics=true" -o /dev/null | FileCheck %s --check-prefix=LEVELS

// recompute-statistics makes batch coupling exact: the batch mean (it depends
// on the weights) is accumulated in a first loop that recomputes the forward
// pass up to it; the second loop centers every sample with the full-batch
// mean.

// LEVELS-LABEL: @batchnorm: batch size 8, loops 2
// LEVELS:         linalg.matmul: batched(0)
// LEVELS:         linalg.reduce: reduced(add) [loop 1]
// LEVELS:         linalg.broadcast: derived [after loop 1]
// LEVELS:         linalg.sub: batched(0)
// LEVELS:         linalg.reduce: reduced(add) [loop 2]

// CHECK-LABEL: func.func @batchnorm(
// CHECK:         %[[SUM:.*]] = scf.for
// CHECK:           %[[H1:.*]] = linalg.matmul
// CHECK:           %[[P:.*]] = linalg.reduce { arith.addf } ins(%[[H1]] : tensor<4x3xf32>)
// CHECK:           ga.accumulate <add> %[[P]]
// CHECK:         %[[MEAN:.*]] = linalg.broadcast ins(%[[SUM]] : tensor<3xf32>) outs(%{{.*}} : tensor<8x3xf32>)
// CHECK:         %[[LOSS:.*]] = scf.for
// CHECK:           %[[H2:.*]] = linalg.matmul
// CHECK:           %[[MB:.*]] = linalg.broadcast ins(%[[SUM]] : tensor<3xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK:           linalg.sub ins(%[[H2]], %[[MB]] : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK:         return %[[LOSS]]
func.func @batchnorm(%w: tensor<3x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.reduce { arith.addf } ins(%h : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %mb = linalg.broadcast ins(%sum : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  %c = linalg.sub ins(%h, %mb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c : tensor<8x3xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  return %l : tensor<f32>
}
