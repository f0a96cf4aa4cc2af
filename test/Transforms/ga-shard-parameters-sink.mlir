// RUN: ga-opt %s --ga-shard-parameters="rank=0 world=3 param-args=0 param-results=0 loss=1" | FileCheck %s
// RUN: ga-opt %s --ga-shard-parameters="rank=0 world=3 param-args=0 param-results=0 loss=1 keep-gathered=0" | FileCheck %s --check-prefix=KEEP

// The transposed weight that --ga-accumulate computes once before the
// micro-batch loop (it does not depend on the batch) moves into the loop,
// after the weight's gather: the whole weight is never alive across the
// loop. Rank 0 of 3 holds rows [0, 1) of 4 (uneven). With keep-gathered the
// transpose stays before the loop, after the one gather.
//
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.*]]: tensor<1x8xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         scf.for
// CHECK:           %[[WF:.*]] = ga.all_gather %[[W]] shard 0 of 3 : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK:           %[[WT:.*]] = linalg.transpose ins(%[[WF]] : tensor<4x8xf32>)
// CHECK:           linalg.matmul ins(%{{.*}}, %[[WT]] : tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK:           ga.reduce_scatter <sum> %{{.*}} shard 0 of 3 : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK:           scf.yield
// CHECK-NOT:     ga.all_gather
// CHECK-NOT:     linalg.transpose
// CHECK:         return

// KEEP-LABEL: func.func @train_step
// KEEP:         %[[WF:.*]] = ga.all_gather %{{.*}} shard 0 of 3
// KEEP:         linalg.transpose ins(%[[WF]] : tensor<4x8xf32>)
// KEEP:         scf.for
// KEEP-NOT:     ga.all_gather

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s2 = affine_map<(d0, d1) -> ()>
#gx = affine_map<(n, k, m) -> (m, k)>
#ga = affine_map<(n, k, m) -> (n, k)>
func.func @train_step(%w: tensor<4x8xf32>, %x: tensor<16x8xf32>, %lr: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<8x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x8xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %el = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %r:2 = scf.for %i = %c0 to %c16 step %c4 iter_args(%acc = %acc0, %l = %l0)
      -> (tensor<4x8xf32>, tensor<f32>) {
    %xs = tensor.extract_slice %x[%i, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
    %ye = tensor.empty() : tensor<4x4xf32>
    %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x4xf32>) -> tensor<4x4xf32>
    %y = linalg.matmul ins(%xs, %wt : tensor<4x8xf32>, tensor<8x4xf32>) outs(%yz : tensor<4x4xf32>) -> tensor<4x4xf32>
    %l2 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<4x4xf32>) outs(%l : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %0 = arith.addf %a, %o : f32
      linalg.yield %0 : f32
    } -> tensor<f32>
    %g = linalg.generic {indexing_maps = [#gx, #gx, #ga], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xs, %xs : tensor<4x8xf32>, tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %0 = arith.mulf %a, %b : f32
      %1 = arith.addf %0, %o : f32
      linalg.yield %1 : f32
    } -> tensor<4x8xf32>
    scf.yield %g, %l2 : tensor<4x8xf32>, tensor<f32>
  }
  %gw = ga.reduce_scatter <sum> %r#0 shard 0 of 3 : tensor<4x8xf32> -> tensor<1x8xf32>
  %loss = ga.all_reduce <sum> %r#1 : tensor<f32>
  %wr = tensor.extract_slice %w[0, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
  %e2 = tensor.empty() : tensor<1x8xf32>
  %w2 = linalg.generic {indexing_maps = [#id2, #id2, #s2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wr, %gw, %lr : tensor<1x8xf32>, tensor<1x8xf32>, tensor<f32>) outs(%e2 : tensor<1x8xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32, %o: f32):
    %0 = arith.mulf %q, %s : f32
    %1 = arith.subf %p, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x8xf32>
  %wa = ga.all_gather %w2 shard 0 of 3 : tensor<1x8xf32> -> tensor<4x8xf32>
  return %wa, %loss : tensor<4x8xf32>, tensor<f32>
}
