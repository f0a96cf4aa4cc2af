// RUN: ga-opt %s -ga-fuse-elementwise -split-input-file | FileCheck %s

// The producer reads its init (%o) and the consumer reduces over k, which its
// map of %y drops: fused, the producer's update would run once per k
// (upstream linalg-fuse-elementwise-ops does it and computes init * x^3).
// Both ops stay.
// CHECK-LABEL: func.func @reads_init_consumer_reduces
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel"]
// CHECK:           arith.mulf
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["reduction", "parallel"]
// CHECK-SAME:        ins(%[[Y]], %arg2 : tensor<2xf32>, tensor<3xf32>)
func.func @reads_init_consumer_reduces(%x: tensor<2xf32>, %init: tensor<2xf32>,
                                       %w: tensor<3xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<2xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %o, %a : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(k, i) -> (i)>, affine_map<(k, i) -> (k)>,
                                        affine_map<(k, i) -> (i)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%y, %w : tensor<2xf32>, tensor<3xf32>) outs(%z0 : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %z : tensor<2xf32>
}

// -----

// The same producer with an element-wise consumer (its map of %y is a
// permutation of all its loops: each element is updated once): fused.
// CHECK-LABEL: func.func @reads_init_consumer_elementwise
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%arg0, %arg2 : tensor<2x3xf32>, tensor<3x2xf32>)
// CHECK-SAME:        outs(%arg1, %{{[0-9]+}} : tensor<2x3xf32>, tensor<3x2xf32>)
// CHECK:           arith.mulf
// CHECK:           math.tanh
// CHECK-NOT:     linalg.generic
func.func @reads_init_consumer_elementwise(%x: tensor<2x3xf32>, %init: tensor<2x3xf32>,
                                           %v: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%init : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %o, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j, i)>,
                                        affine_map<(j, i) -> (j, i)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y, %v : tensor<2x3xf32>, tensor<3x2xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %h = math.tanh %a : f32
    %s = arith.addf %h, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// A producer that does not read its init is fused into the reduction, as
// upstream fuses it (recomputing it per k is exact).
// CHECK-LABEL: func.func @pure_producer_consumer_reduces
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["reduction", "parallel"]
// CHECK:           math.tanh
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
func.func @pure_producer_consumer_reduces(%x: tensor<2xf32>, %w: tensor<3xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<2xf32>) outs(%e0 : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.tanh %a : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(k, i) -> (i)>, affine_map<(k, i) -> (k)>,
                                        affine_map<(k, i) -> (i)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%y, %w : tensor<2xf32>, tensor<3xf32>) outs(%z0 : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %z : tensor<2xf32>
}

// -----

// A producer with a second use is not fused (upstream's single-use rule).
// CHECK-LABEL: func.func @two_uses
// CHECK-COUNT-2: linalg.generic
func.func @two_uses(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.tanh %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%y : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.exp %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// An update written into its destination (the PyTorch frontend's in-place
// form) keeps the reshape of its operand: folded by expansion, the update
// would compute a 1x8 tensor and write its collapse into %p, which
// eliminate-empty-tensors cannot make it compute into (a copy). The same
// update without a destination write is folded.
// CHECK-LABEL: func.func @destination_write
// CHECK:         %[[G:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[G]] : tensor<8xf32>, tensor<8xf32>)
// CHECK:         bufferization.materialize_in_destination %[[U]] in %{{.*}} : (tensor<8xf32>, tensor<8xf32>)
// CHECK-LABEL: func.func @no_destination_write
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8xf32>)
// CHECK:         tensor.collapse_shape
#id2 = affine_map<(i, j) -> (i, j)>
#id1 = affine_map<(i) -> (i)>
func.func @destination_write(%p: tensor<8xf32>, %g2: tensor<1x8xf32>) -> tensor<8xf32> {
  %g = tensor.collapse_shape %g2 [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %w = bufferization.materialize_in_destination %u in %p : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %w : tensor<8xf32>
}
func.func @no_destination_write(%p: tensor<8xf32>, %g2: tensor<1x8xf32>) -> tensor<8xf32> {
  %g = tensor.collapse_shape %g2 [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %u : tensor<8xf32>
}
