// RUN: ga-opt %s -ga-accumulate="micro-batches=4" | FileCheck %s
// RUN: ga-opt %s -ga-accumulate="micro-batches=4" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// A dense layer's step: forward, mean-squared loss, weight and bias
// gradients, SGD. After the whole pipeline: upstream ops only, one loop,
// every gradient accumulated by its own producer (no ga.accumulate left).

// CHECK-LABEL: func.func @dense_step(
// CHECK-NOT:     = ga.
// CHECK:         %[[LOOP:.*]]:3 = scf.for {{.*}} iter_args(%[[LOSS:.*]] = %{{.*}}, %[[DW:.*]] = %{{.*}}, %[[DB:.*]] = %{{.*}})
// CHECK:           %[[SSE:.*]] = linalg.generic {{.*}} outs(%[[LOSS]] : tensor<f32>)
// CHECK:           %[[GW:.*]] = linalg.matmul {{.*}} outs(%[[DW]] : tensor<4x3xf32>)
// CHECK:           %[[GB:.*]] = linalg.reduce {{.*}} outs(%[[DB]] : tensor<3xf32>)
// CHECK:           scf.yield %[[SSE]], %[[GW]], %[[GB]]
// CHECK-NOT:     = ga.
// CHECK:         return

// After bufferization the gradient buffers are updated in place: the loop
// yields its own iter_args, and nothing is allocated for or copied into them.
// BUF-LABEL: func.func @dense_step(
// BUF:         scf.for {{.*}} iter_args(%[[L:.*]] = %{{.*}}, %[[W:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}) -> (memref<f32>, memref<4x3xf32>, memref<3xf32>)
// BUF-NOT:       memref.copy {{.*}}, %[[W]]
// BUF-NOT:       memref.copy {{.*}}, %[[B]]
// BUF-NOT:       memref.alloc() {{.*}} : memref<4x3xf32>
// BUF:           linalg.matmul {{.*}} outs(%[[W]] : memref<4x3xf32>)
// BUF-NOT:       memref.copy {{.*}}, %[[W]]
// BUF:           linalg.reduce {{.*}} outs(%[[B]] : memref<3xf32>)
// BUF:           scf.yield %[[L]], %[[W]], %[[B]]


func.func @dense_step(%w: tensor<4x3xf32>, %b: tensor<3xf32>, %lr: f32,
                      %x: tensor<16x4xf32> {ga.batch = 0 : i64},
                      %y: tensor<16x3xf32> {ga.batch = 0 : i64})
    -> (tensor<4x3xf32>, tensor<3xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0208333332 : f32   // 1 / (16 * 3)
  %e = tensor.empty() : tensor<16x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x3xf32>) -> tensor<16x3xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<16x4xf32>, tensor<4x3xf32>) outs(%z : tensor<16x3xf32>) -> tensor<16x3xf32>
  // r = x w + b - y; dr = 2 r / (B * 3)
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b, %y : tensor<16x3xf32>, tensor<3xf32>, tensor<16x3xf32>) outs(%e : tensor<16x3xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    %d = arith.subf %s, %t : f32
    linalg.yield %d : f32
  } -> tensor<16x3xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<16x3xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %n = arith.addf %acc, %sq : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %dr = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<16x3xf32>) outs(%e : tensor<16x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %t = arith.mulf %a, %two : f32
    %g = arith.mulf %t, %scale : f32
    linalg.yield %g : f32
  } -> tensor<16x3xf32>
  %ew = tensor.empty() : tensor<4x3xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dr : tensor<16x4xf32>, tensor<16x3xf32>) outs(%zw : tensor<4x3xf32>) -> tensor<4x3xf32>
  %eb = tensor.empty() : tensor<3xf32>
  %zb = linalg.fill ins(%zero : f32) outs(%eb : tensor<3xf32>) -> tensor<3xf32>
  %db = linalg.reduce { arith.addf } ins(%dr : tensor<16x3xf32>) outs(%zb : tensor<3xf32>) dimensions = [0]
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%dw : tensor<4x3xf32>) outs(%w : tensor<4x3xf32>) {
  ^bb0(%g: f32, %p: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<4x3xf32>
  %b2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%db : tensor<3xf32>) outs(%b : tensor<3xf32>) {
  ^bb0(%g: f32, %p: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  return %w2, %b2, %loss : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>
}
