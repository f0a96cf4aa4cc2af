// RUN: ga-opt %s --ga-shard-parameters="rank=1 world=2 param-args=0 param-results=0 loss=1" | FileCheck %s
// RUN: ga-opt %s --ga-shard-parameters="rank=1 world=2 param-args=0 param-results=0 loss=1 keep-gathered=0 reduce-after-loop=0" | FileCheck %s --check-prefix=KEEP
// RUN: ga-opt %s --ga-shard-parameters="rank=1 world=2 param-args=0 param-results=0" | FileCheck %s --check-prefix=NOLOSS

// A step after --ga-accumulate and --ga-shard-optimizer (rank 1 of 2): the
// weight %w (4x8) is read by the forward (%y, which the loss depends on)
// and by the backward (%dx); its gradient is accumulated from zero by one
// op whose combiner adds, reduce-scattered after the loop; the update reads
// this rank's rows of %w and the result is their all-gather.
//
// Default plan: the weight is an argument of its rows, gathered twice per
// micro-batch (before the forward and before the backward reader), the
// gradient reduce-scattered per micro-batch into a shard accumulator that
// starts at zero (the contribution's zero made right before the op that
// accumulates it, reduce-scattered right after it: the whole-size buffer
// lives only between the two); the update reads the argument itself and
// the result is the rows.
//
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.*]]: tensor<2x8xf32>, %{{.*}}: tensor<16x8xf32>, %[[LR:.*]]: tensor<f32>)
// CHECK-SAME:    -> (tensor<2x8xf32>, tensor<f32>)
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[Z]], %{{.*}} = %{{.*}}) -> (tensor<2x8xf32>, tensor<f32>)
// CHECK:           %[[WF:.*]] = ga.all_gather %[[W]] shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[WF]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:           %[[WB:.*]] = ga.all_gather %[[W]] shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK:           %[[DX:.*]] = linalg.generic {{.*}} ins(%[[WB]] : tensor<4x8xf32>)
// CHECK:           %[[FZ:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:           %[[G:.*]] = linalg.generic {{.*}} outs(%[[FZ]] : tensor<4x8xf32>)
// CHECK:           %[[RS:.*]] = ga.reduce_scatter <sum> %[[G]] shard 1 of 2 : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK:           %[[SUM:.*]] = linalg.add ins(%[[ACC]], %[[RS]] : tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK:           scf.yield %[[SUM]], %{{.*}} : tensor<2x8xf32>, tensor<f32>
// CHECK-NOT:     ga.reduce_scatter
// CHECK-NOT:     ga.all_gather
// CHECK:         %[[W2:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[R]]#0, %[[LR]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<f32>)
// CHECK:         return %[[W2]], %{{.*}} : tensor<2x8xf32>, tensor<f32>

// keep-gathered and reduce-after-loop: one gather before the loop, the
// full accumulator, the reduce-scatter after the loop.
// KEEP-LABEL: func.func @train_step
// KEEP-SAME:    (%[[W:.*]]: tensor<2x8xf32>
// KEEP:         %[[WA:.*]] = ga.all_gather %[[W]] shard 1 of 2
// KEEP:         scf.for {{.*}} -> (tensor<4x8xf32>, tensor<f32>)
// KEEP-NOT:       ga.all_gather
// KEEP-NOT:       ga.reduce_scatter
// KEEP:         ga.reduce_scatter <sum> %{{.*}} shard 1 of 2 : tensor<4x8xf32> -> tensor<2x8xf32>
// KEEP-NOT:     ga.all_gather

// Without the loss, the forward is unknown: one gather per micro-batch.
// NOLOSS:       scf.for
// NOLOSS-COUNT-1: ga.all_gather
// NOLOSS-NOT:   ga.all_gather
// NOLOSS:       ga.reduce_scatter
// NOLOSS:       scf.yield

#xw = affine_map<(m, n, k) -> (m, k)>
#ww = affine_map<(m, n, k) -> (n, k)>
#yw = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s2 = affine_map<(d0, d1) -> ()>
#wd = affine_map<(m, k, n) -> (n, k)>
#dd = affine_map<(m, k, n) -> (m, k)>
#gx = affine_map<(n, k, m) -> (m, k)>
#ga = affine_map<(n, k, m) -> (n, k)>
func.func @train_step(%w: tensor<4x8xf32>, %x: tensor<16x8xf32>, %lr: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %el = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %r:2 = scf.for %i = %c0 to %c16 step %c4 iter_args(%acc = %acc0, %l = %l0)
      -> (tensor<4x8xf32>, tensor<f32>) {
    %xs = tensor.extract_slice %x[%i, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
    %ye = tensor.empty() : tensor<4x4xf32>
    %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x4xf32>) -> tensor<4x4xf32>
    %y = linalg.generic {indexing_maps = [#xw, #ww, #yw], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xs, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%yz : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %0 = arith.mulf %a, %b : f32
      %1 = arith.addf %0, %o : f32
      linalg.yield %1 : f32
    } -> tensor<4x4xf32>
    %l2 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
        ins(%y : tensor<4x4xf32>) outs(%l : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %0 = arith.addf %a, %o : f32
      linalg.yield %0 : f32
    } -> tensor<f32>
    %de = tensor.empty() : tensor<4x8xf32>
    %dz = linalg.fill ins(%zero : f32) outs(%de : tensor<4x8xf32>) -> tensor<4x8xf32>
    %dx = linalg.generic {indexing_maps = [#wd, #dd], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%w : tensor<4x8xf32>) outs(%dz : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %0 = arith.addf %a, %o : f32
      linalg.yield %0 : f32
    } -> tensor<4x8xf32>
    %g = linalg.generic {indexing_maps = [#gx, #gx, #ga], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xs, %dx : tensor<4x8xf32>, tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %0 = arith.mulf %a, %b : f32
      %1 = arith.addf %0, %o : f32
      linalg.yield %1 : f32
    } -> tensor<4x8xf32>
    scf.yield %g, %l2 : tensor<4x8xf32>, tensor<f32>
  }
  %gw = ga.reduce_scatter <sum> %r#0 shard 1 of 2 : tensor<4x8xf32> -> tensor<2x8xf32>
  %loss = ga.all_reduce <sum> %r#1 : tensor<f32>
  %wr = tensor.extract_slice %w[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %w2 = linalg.generic {indexing_maps = [#id2, #id2, #s2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wr, %gw, %lr : tensor<2x8xf32>, tensor<2x8xf32>, tensor<f32>) outs(%e2 : tensor<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32, %o: f32):
    %0 = arith.mulf %q, %s : f32
    %1 = arith.subf %p, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x8xf32>
  %wa = ga.all_gather %w2 shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
  return %wa, %loss : tensor<4x8xf32>, tensor<f32>
}
