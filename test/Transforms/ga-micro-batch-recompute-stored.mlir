// RUN: ga-opt %s -ga-micro-batch="micro-batches=2 recompute-statistics=true" | FileCheck %s
// RUN: ga-opt %s -test-ga-batch-dependence="recompute-statistics=true" -o /dev/null | FileCheck %s --check-prefix=LEVELS

// Four levels of statistics (two normalizations, each a mean then a
// variance-like sum of the centered values). Each loop does only its own
// level's work: a per-sample value that reads a statistic of an earlier loop
// (the centered %c1, the product %h2) is computed once, stored by that loop
// at full batch size and loaded by the later loops, never recomputed. Work on
// the input alone (%h1 = %x %w1) is recomputed by the second loop.

// LEVELS-LABEL: @two_normalizations: batch size 8, loops 4

// CHECK-LABEL: func.func @two_normalizations(
// CHECK:         %[[SUM1:.*]] = scf.for
// CHECK:           linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3x3xf32>)
// CHECK:           ga.accumulate <add>
// CHECK:         %[[L2:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[S1:.*]] = %{{.*}}) -> (tensor<3xf32>, tensor<8x3xf32>)
// CHECK:           %[[H1:.*]] = linalg.matmul
// CHECK:           %[[C1:.*]] = linalg.sub ins(%[[H1]]
// CHECK:           ga.accumulate <add>
// CHECK:           tensor.insert_slice %[[C1]] into %[[S1]]
// CHECK:         %[[L3:.*]]:2 = scf.for
// CHECK-NOT:       linalg.sub
// CHECK:           %[[C1L:.*]] = tensor.extract_slice %[[L2]]#1
// CHECK:           %[[Y1:.*]] = linalg.mul ins(%[[C1L]]
// CHECK:           %[[H2:.*]] = linalg.matmul ins(%[[Y1]]
// CHECK:           ga.accumulate <add>
// CHECK:           tensor.insert_slice %[[H2]]
// CHECK:         %[[LOSS:.*]] = scf.for
// CHECK-NOT:       linalg.matmul
// CHECK:           %[[H2L:.*]] = tensor.extract_slice %[[L3]]#1
// CHECK:           linalg.sub ins(%[[H2L]]
// CHECK:         return %[[LOSS]]
func.func @two_normalizations(%w1: tensor<3x3xf32>, %w2: tensor<3x3xf32>,
                              %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  // First normalization: mean, then a sum of squares of the centered values.
  %h1 = linalg.matmul ins(%x, %w1 : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %mean1 = linalg.reduce { arith.addf } ins(%h1 : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %mb1 = linalg.broadcast ins(%mean1 : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  %c1 = linalg.sub ins(%h1, %mb1 : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %sq1 = linalg.mul ins(%c1, %c1 : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %var1 = linalg.reduce { arith.addf } ins(%sq1 : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %vb1 = linalg.broadcast ins(%var1 : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  %y1 = linalg.mul ins(%c1, %vb1 : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  // Second normalization, of a product of the first one's output.
  %h2 = linalg.matmul ins(%y1, %w2 : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %mean2 = linalg.reduce { arith.addf } ins(%h2 : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %mb2 = linalg.broadcast ins(%mean2 : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  %c2 = linalg.sub ins(%h2, %mb2 : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c2 : tensor<8x3xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  return %l : tensor<f32>
}
