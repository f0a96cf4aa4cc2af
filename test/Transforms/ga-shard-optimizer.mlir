// RUN: ga-opt %s --ga-shard-optimizer="rank=1 world=2 params=0,1 state-results=2,3 state-args=2,3" -split-input-file | FileCheck %s
// RUN: ga-opt %s --ga-shard-optimizer="rank=1 world=3 params=0,1 state-results=2,3 state-args=2,3" -split-input-file | FileCheck %s --check-prefix=W3

// SGD with momentum on a weight (4x8) and a bias (3): every update is
// elementwise, so rank 1 reads rows of the parameters, keeps rows of the
// momentum, reduce-scatters the gradients and all-gathers the parameters.
// With 3 ranks the split is uneven (rows [1, 2) of 4 and of 3).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s2 = affine_map<(d0, d1) -> ()>
#id1 = affine_map<(d0) -> (d0)>
#s1 = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<3xf32>, %[[MW:.*]]: tensor<2x8xf32>, %[[MB:.*]]: tensor<2xf32>, %[[GW:.*]]: tensor<4x8xf32>, %[[GB:.*]]: tensor<3xf32>, %[[LR:.*]]: tensor<f32>, %[[MU:.*]]: tensor<f32>, %[[L:.*]]: tensor<f32>)
// CHECK-SAME:    -> (tensor<4x8xf32>, tensor<3xf32>, tensor<2x8xf32>, tensor<2xf32>, tensor<f32>)
// CHECK-NOT:     ga.all_reduce
// CHECK-DAG:     %[[RW:.*]] = ga.reduce_scatter <sum> %[[GW]] shard 1 of 2 : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-DAG:     %[[RB:.*]] = ga.reduce_scatter <mean> %[[GB]] shard 1 of 2 : tensor<3xf32> -> tensor<2xf32>
// CHECK-DAG:     %[[M2:.*]] = linalg.generic {{.*}} ins(%[[RW]], %[[MW]], %[[MU]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<f32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK-DAG:     %[[WR:.*]] = tensor.extract_slice %[[W]][2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
// CHECK-DAG:     %[[W2:.*]] = linalg.generic {{.*}} ins(%[[WR]], %[[M2]], %[[LR]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<f32>)
// CHECK-DAG:     %[[BR:.*]] = tensor.extract_slice %[[B]][1] [2] [1] : tensor<3xf32> to tensor<2xf32>
// CHECK-DAG:     %[[WA:.*]] = ga.all_gather %[[W2]] shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK-DAG:     %[[BA:.*]] = ga.all_gather %{{.*}} shard 1 of 2 : tensor<2xf32> -> tensor<3xf32>
// CHECK:         return %[[WA]], %[[BA]], %[[M2]], %{{.*}}, %[[L]]

// W3-LABEL: func.func @train_step
// W3-SAME:    %{{.*}}: tensor<1x8xf32>, %{{.*}}: tensor<1xf32>
// W3-DAG:     ga.reduce_scatter <sum> %{{.*}} shard 1 of 3 : tensor<4x8xf32> -> tensor<1x8xf32>
// W3-DAG:     ga.reduce_scatter <mean> %{{.*}} shard 1 of 3 : tensor<3xf32> -> tensor<1xf32>
// W3-DAG:     tensor.extract_slice %{{.*}}[1, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
// W3-DAG:     ga.all_gather %{{.*}} shard 1 of 3 : tensor<1x8xf32> -> tensor<4x8xf32>
// W3-DAG:     ga.all_gather %{{.*}} shard 1 of 3 : tensor<1xf32> -> tensor<3xf32>
func.func @train_step(%w: tensor<4x8xf32>, %b: tensor<3xf32>, %mw: tensor<4x8xf32>, %mb: tensor<3xf32>,
                      %gw_acc: tensor<4x8xf32>, %gb_acc: tensor<3xf32>, %lr: tensor<f32>, %mu: tensor<f32>,
                      %loss: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>, tensor<3xf32>, tensor<f32>) {
  %gw = ga.all_reduce <sum> %gw_acc : tensor<4x8xf32>
  %gb = ga.all_reduce <mean> %gb_acc : tensor<3xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %mw2 = linalg.generic {indexing_maps = [#id2, #id2, #s2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%gw, %mw, %mu : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%g: f32, %m: f32, %u: f32, %o: f32):
    %0 = arith.mulf %m, %u : f32
    %1 = arith.addf %g, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %w2 = linalg.generic {indexing_maps = [#id2, #id2, #s2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %mw2, %lr : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %m: f32, %l: f32, %o: f32):
    %0 = arith.mulf %m, %l : f32
    %1 = arith.subf %p, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %mb2 = linalg.generic {indexing_maps = [#id1, #id1, #s1, #id1], iterator_types = ["parallel"]}
      ins(%gb, %mb, %mu : tensor<3xf32>, tensor<3xf32>, tensor<f32>) outs(%e1 : tensor<3xf32>) {
  ^bb0(%g: f32, %m: f32, %u: f32, %o: f32):
    %0 = arith.mulf %m, %u : f32
    %1 = arith.addf %g, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<3xf32>
  %b2 = linalg.generic {indexing_maps = [#id1, #id1, #s1, #id1], iterator_types = ["parallel"]}
      ins(%b, %mb2, %lr : tensor<3xf32>, tensor<3xf32>, tensor<f32>) outs(%e1 : tensor<3xf32>) {
  ^bb0(%p: f32, %m: f32, %l: f32, %o: f32):
    %0 = arith.mulf %m, %l : f32
    %1 = arith.subf %p, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<3xf32>
  return %w2, %b2, %mw2, %mb2, %loss : tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>, tensor<3xf32>, tensor<f32>
}

// -----

// Clipping: the global norm reads every element of the gradient, so its
// all-reduce stays and the update reads this rank's rows of it; a
// multi-result update (Adam-like: the parameter and two moments from one
// op) is rebuilt once; a transposed read is sliced along the dimension the
// row loop indexes (here the columns of %t).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#s2 = affine_map<(d0, d1) -> ()>
#red = affine_map<(d0, d1) -> ()>
#id1 = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<8x4xf32>
// CHECK-DAG:     %[[G:.*]] = ga.all_reduce <sum>
// CHECK-DAG:     linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[G]] : tensor<4x8xf32>)
// CHECK-DAG:     %[[GR:.*]] = tensor.extract_slice %[[G]][2, 0] [2, 8] [1, 1]
// CHECK-DAG:     %[[TR:.*]] = tensor.extract_slice %{{.*}}[0, 2] [8, 2] [1, 1] : tensor<8x4xf32> to tensor<8x2xf32>
// CHECK-DAG:     %[[U:.*]]:3 = linalg.generic {{.*}} ins(%{{.*}}, %[[GR]], %{{.*}}, %[[TR]], %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<8x2xf32>, tensor<f32>, tensor<2x8xf32>)
// CHECK-DAG:     ga.reduce_scatter <sum> %{{.*}} shard 1 of 2 : tensor<3xf32> -> tensor<2xf32>
// CHECK-DAG:     %[[A:.*]] = ga.all_gather %[[U]]#0 shard 1 of 2
// CHECK:         return %[[A]], %{{.*}}, %[[U]]#1, %[[U]]#2
func.func @train_step(%w: tensor<4x8xf32>, %b: tensor<3xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>,
                      %t: tensor<8x4xf32>, %g_acc: tensor<4x8xf32>, %gb_acc: tensor<3xf32>)
    -> (tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %g = ga.all_reduce <sum> %g_acc : tensor<4x8xf32>
  %gb = ga.all_reduce <sum> %gb_acc : tensor<3xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %norm = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]}
      ins(%g : tensor<4x8xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.mulf %a, %a : f32
    %1 = arith.addf %o, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %u:3 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #tr2, #s2, #id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g, %m, %t, %norm, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<f32>, tensor<4x8xf32>)
      outs(%e2, %e2, %e2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%p: f32, %gg: f32, %mm: f32, %tt: f32, %n: f32, %vv: f32, %o0: f32, %o1: f32, %o2: f32):
    %0 = arith.divf %gg, %n : f32
    %1 = arith.addf %mm, %0 : f32
    %2 = arith.mulf %0, %0 : f32
    %3 = arith.addf %vv, %2 : f32
    %4 = arith.mulf %1, %tt : f32
    %5 = arith.subf %p, %4 : f32
    linalg.yield %5, %1, %3 : f32, f32, f32
  } -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %e1 = tensor.empty() : tensor<3xf32>
  %b2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b, %gb : tensor<3xf32>, tensor<3xf32>) outs(%e1 : tensor<3xf32>) {
  ^bb0(%p: f32, %gg: f32, %o: f32):
    %0 = arith.subf %p, %gg : f32
    linalg.yield %0 : f32
  } -> tensor<3xf32>
  return %u#0, %b2, %u#1, %u#2 : tensor<4x8xf32>, tensor<3xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A bias gradient reduced in another shape than the bias (the 1x3 row that a
// reduction with keepdim accumulates, collapsed to 3 for the update): the
// all-reduce commutes with the reshape (it combines the ranks' tensors
// element by element), so the collapse moves before it and the rows of the
// collapsed gradient are reduce-scattered.

#id1 = affine_map<(d0) -> (d0)>
#s1 = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @train_step
// CHECK-NOT:     ga.all_reduce
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
// CHECK:         %[[RB:.*]] = ga.reduce_scatter <sum> %[[C]] shard 1 of 2 : tensor<3xf32> -> tensor<2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[RB]], %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xf32>, tensor<f32>)

// W3-LABEL: func.func @train_step
// W3:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
// W3:         ga.reduce_scatter <sum> %[[C]] shard 1 of 3 : tensor<3xf32> -> tensor<1xf32>
func.func @train_step(%w: tensor<4xf32>, %b: tensor<3xf32>, %mw: tensor<4xf32>, %mb: tensor<3xf32>,
                      %gb_acc: tensor<1x3xf32>, %lr: tensor<f32>, %mu: tensor<f32>, %loss: tensor<f32>)
    -> (tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<f32>) {
  %gb2 = ga.all_reduce <sum> %gb_acc : tensor<1x3xf32>
  %gb = tensor.collapse_shape %gb2 [[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %mb2 = linalg.generic {indexing_maps = [#id1, #id1, #s1, #id1], iterator_types = ["parallel"]}
      ins(%gb, %mb, %mu : tensor<3xf32>, tensor<3xf32>, tensor<f32>) outs(%e1 : tensor<3xf32>) {
  ^bb0(%g: f32, %m: f32, %u: f32, %o: f32):
    %0 = arith.mulf %m, %u : f32
    %1 = arith.addf %g, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<3xf32>
  %b2 = linalg.generic {indexing_maps = [#id1, #id1, #s1, #id1], iterator_types = ["parallel"]}
      ins(%b, %mb2, %lr : tensor<3xf32>, tensor<3xf32>, tensor<f32>) outs(%e1 : tensor<3xf32>) {
  ^bb0(%p: f32, %m: f32, %l: f32, %o: f32):
    %0 = arith.mulf %m, %l : f32
    %1 = arith.subf %p, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<3xf32>
  return %w, %b2, %mw, %mb2, %loss : tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<f32>
}
