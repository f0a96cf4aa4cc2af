// RUN: ga-opt %s -ga-hoist-invariant-extracts | FileCheck %s

// The read of the 0-d learning rate moves out of the body; the arithmetic
// stays.
// CHECK-LABEL: func.func @sgd
// CHECK:         %[[LR:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK-NEXT:    linalg.generic
// CHECK:         ^bb0(%[[G:.*]]: f32, %[[W:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[LR]], %[[G]] : f32
// CHECK-NEXT:      %[[U:.*]] = arith.subf %[[W]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[U]] : f32
func.func @sgd(%g: tensor<64xf32>, %w: tensor<64xf32>, %rate: tensor<f32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%g : tensor<64xf32>) outs(%w : tensor<64xf32>) {
  ^bb0(%gi: f32, %wi: f32):
    %lr = tensor.extract %rate[] : tensor<f32>
    %s = arith.mulf %lr, %gi : f32
    %u = arith.subf %wi, %s : f32
    linalg.yield %u : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
