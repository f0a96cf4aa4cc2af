// RUN: ga-opt %s -ga-fold-unit-dims -split-input-file | FileCheck %s

// A keepdim row mean (output map with a constant 0) and the broadcast of its
// result through a unit dimension, collapsed for the consumer (torch-mlir's
// LayerNorm): the unit dimensions go, the reshapes between the ops cancel,
// and every op is on the rows (d0, d1) of the same iteration space. The
// payloads are unchanged.
// CHECK-LABEL: func.func @keepdim_mean_and_broadcast
// CHECK:         %[[MEAN:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:        ins(%{{.*}} : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:             arith.addf
// CHECK:         %[[DIV:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[MEAN]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK:             arith.divf
// CHECK:         %[[SUB:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[DIV]] : tensor<2x8x16xf32>, tensor<2x8x16xf32>)
// CHECK:             arith.subf
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         return %[[SUB]]
func.func @keepdim_mean_and_broadcast(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16.0 : f32
  %e = tensor.empty() : tensor<2x8x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                          affine_map<(d0, d1, d2) -> (d0, d1, 0)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x8x16xf32>) outs(%z : tensor<2x8x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x8x1xf32>
  %eb = tensor.empty() : tensor<2x8x1x16xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>,
                                           affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sum : tensor<2x8x1xf32>) outs(%eb : tensor<2x8x1x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  } -> tensor<2x8x1x16xf32>
  %c = tensor.collapse_shape %mean [[0], [1, 2], [3]] : tensor<2x8x1x16xf32> into tensor<2x8x16xf32>
  %eo = tensor.empty() : tensor<2x8x16xf32>
  %centered = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                               affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                               affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                              iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %c : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%eo : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %centered : tensor<2x8x16xf32>
}

// -----

// A library product keeps its unit dimension (its layout is the library's).
// CHECK-LABEL: func.func @library_product
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<1x4xf32>)
// CHECK-SAME:        ga.library_product
func.func @library_product(%a: tensor<1x8xf32>, %b: tensor<8x4xf32>, %c: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1x8xf32>, tensor<8x4xf32>) outs(%c : tensor<1x4xf32>)
      attrs = {ga.library_product} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// The update of a loop-carried accumulator keeps writing the accumulator
// itself (in place, and recognisable by --ga-mark-accumulating-ops); the
// gradient it adds is folded.
// CHECK-LABEL: func.func @accumulator
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<1x16xf32>)
// CHECK:           %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16xf32>)
// CHECK:           %[[GE:.*]] = tensor.expand_shape %[[G]]
// CHECK:           linalg.generic {{.*}} ins(%[[GE]] : tensor<1x16xf32>) outs(%[[ACC]] : tensor<1x16xf32>)
func.func @accumulator(%x: tensor<1x16xf32>, %init: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<1x16xf32>) {
    %e = tensor.empty() : tensor<1x16xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<1x16xf32>) outs(%e : tensor<1x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %a : f32
      linalg.yield %m : f32
    } -> tensor<1x16xf32>
    %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%g : tensor<1x16xf32>) outs(%acc : tensor<1x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %o, %a : f32
      linalg.yield %s : f32
    } -> tensor<1x16xf32>
    scf.yield %u : tensor<1x16xf32>
  }
  return %r : tensor<1x16xf32>
}

// -----

// A result written into a destination (an in-place update) keeps its
// shape: a reshape between it and the insert_slice would cost a copy.
// CHECK-LABEL: func.func @destination
// CHECK:         %[[U:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16xf32>)
// CHECK:         tensor.insert_slice %[[U]]
func.func @destination(%x: tensor<1x16xf32>, %d: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<1x16xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x16xf32>) outs(%e : tensor<1x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<1x16xf32>
  %r = tensor.insert_slice %u into %d[0, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
