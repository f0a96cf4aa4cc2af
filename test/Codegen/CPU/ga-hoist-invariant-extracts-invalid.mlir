// RUN: ga-opt %s -ga-hoist-invariant-extracts -split-input-file -verify-diagnostics | FileCheck %s

// Nothing that depends on the body moves, and nothing is reported: an
// extract at an index computed in the body stays, and so does one in a
// linalg op on buffers.

// CHECK-LABEL: func.func @index_from_body
// CHECK:         linalg.generic
// CHECK:           linalg.index
// CHECK-NEXT:      tensor.extract
func.func @index_from_body(%t: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%w : tensor<64xf32>) {
  ^bb0(%wi: f32):
    %i = linalg.index 0 : index
    %v = tensor.extract %t[%i] : tensor<64xf32>
    %u = arith.addf %wi, %v : f32
    linalg.yield %u : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      tensor.extract
func.func @buffers(%w: memref<64xf32>, %rate: tensor<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%w : memref<64xf32>) {
  ^bb0(%wi: f32):
    %lr = tensor.extract %rate[] : tensor<f32>
    %u = arith.mulf %wi, %lr : f32
    linalg.yield %u : f32
  }
  return
}
