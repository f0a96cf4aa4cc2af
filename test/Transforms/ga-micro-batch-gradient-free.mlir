// RUN: ga-opt %s -ga-micro-batch="micro-batches=2" | FileCheck %s
// RUN: ga-opt %s -test-ga-batch-dependence -o /dev/null | FileCheck %s --check-prefix=LEVELS

// A statistic of the batch that depends on the weights only through integer
// values (here a count of positive activations, as a mixture-of-experts
// load-balancing loss counts top-k choices) is piecewise constant in them: no
// gradient flows through it. Without recompute-statistics it is computed in
// a first, forward-only loop; the second loop reads the full-batch count.
// (ga-micro-batch-gradient-free-invalid.mlir: the same with a float sum.)

// LEVELS-LABEL: @count: batch size 8, loops 2
// LEVELS:         linalg.reduce: reduced(add) [loop 1]
// LEVELS:         linalg.mul: batched(0)
// LEVELS:         linalg.reduce: reduced(add) [loop 2]

// CHECK-LABEL: func.func @count(
// CHECK:         %[[COUNT:.*]] = scf.for
// CHECK:           linalg.matmul
// CHECK:           arith.cmpf
// CHECK:           arith.uitofp
// CHECK:           ga.accumulate <add>
// CHECK:         %[[LOSS:.*]] = scf.for
// CHECK:           linalg.broadcast ins(%[[COUNT]] : tensor<3xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK:           linalg.mul
// CHECK:         return %[[LOSS]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @count(%w: tensor<3x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %eb = tensor.empty() : tensor<8x3xi1>
  %pos = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x3xf32>) outs(%eb : tensor<8x3xi1>) {
  ^bb0(%a: f32, %o: i1):
    %p = arith.cmpf ogt, %a, %c0 : f32
    linalg.yield %p : i1
  } -> tensor<8x3xi1>
  %hot = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%pos : tensor<8x3xi1>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%a: i1, %o: f32):
    %f = arith.uitofp %a : i1 to f32
    linalg.yield %f : f32
  } -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %n = linalg.reduce { arith.addf } ins(%hot : tensor<8x3xf32>) outs(%z3 : tensor<3xf32>) dimensions = [0]
  %nb = linalg.broadcast ins(%n : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  %c = linalg.mul ins(%h, %nb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c : tensor<8x3xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  return %l : tensor<f32>
}
