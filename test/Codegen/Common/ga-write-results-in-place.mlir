// RUN: ga-opt %s --ga-write-results-in-place="pairs=0:0,1:2" | FileCheck %s
// RUN: ga-opt %s --ga-write-results-in-place="pairs=0:0,1:2" --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --drop-equivalent-buffer-results | FileCheck %s --check-prefix=BUF

// Results 0 and 1 are written into arguments 0 and 2 and dropped from the
// public function, which only calls the private one and returns the loss.
// CHECK-LABEL: func.func private @train_step_in_place(
// CHECK-SAME:    %[[W:[^:]*]]: tensor<4xf32> {ga.init = "uniform"}, %[[X:[^:]*]]: tensor<8x4xf32> {ga.batch = 0 : i64}, %[[M:[^:]*]]: tensor<4xf32>)
// CHECK-SAME:    -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>)
// CHECK:         %[[NW:.*]] = bufferization.materialize_in_destination %{{.*}} in %[[W]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[NM:.*]] = bufferization.materialize_in_destination %{{.*}} in %[[M]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[NW]], %[[NM]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<f32>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[A0:.*]]: tensor<4xf32>, %[[A1:.*]]: tensor<8x4xf32>, %[[A2:.*]]: tensor<4xf32>) -> tensor<f32>
// CHECK:         %[[R:.*]]:3 = call @train_step_in_place(%[[A0]], %[[A1]], %[[A2]])
// CHECK:         return %[[R]]#2 : tensor<f32>

// After bufferization the updates are written into the arguments' buffers:
// the private function keeps only the loss among its results.
// BUF-LABEL: func.func private @train_step_in_place(
// BUF-SAME:    %[[BW:.*]]: memref<4xf32> {ga.init = "uniform"}, %{{.*}}: memref<8x4xf32> {ga.batch = 0 : i64}, %[[BM:.*]]: memref<4xf32>) -> memref<f32>
// BUF:         return %{{.*}} : memref<f32>
// BUF-LABEL: func.func @train_step(
// BUF-SAME:    -> memref<f32>

#id = affine_map<(i) -> (i)>
#red = affine_map<(b, i) -> (b, i)>
#out = affine_map<(b, i) -> (i)>
func.func @train_step(%w: tensor<4xf32> {ga.init = "uniform"},
                      %x: tensor<8x4xf32> {ga.batch = 0 : i64},
                      %m: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#red, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %w2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %m2 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%g : tensor<4xf32>) outs(%zl : tensor<f32>) dimensions = [0]
  return %w2, %m2, %loss : tensor<4xf32>, tensor<4xf32>, tensor<f32>
}
