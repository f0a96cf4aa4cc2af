// RUN: ga-opt %s -ga-wrap-tensor-boundary | FileCheck %s

// A public function with memrefs in its signature is called through a
// wrapper with tensors of the same shapes; argument attributes move to the
// wrapper, scalars pass through.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[W:.*]]: tensor<4xf32> {ga.batch = 0 : i64}, %[[LR:.*]]: f32) -> (tensor<4xf32>, f32)
// CHECK:         %[[B:.*]] = bufferization.to_buffer %[[W]] : tensor<4xf32> to memref<4xf32>
// CHECK:         %[[R:.*]]:2 = call @step__gpu_loops(%[[B]], %[[LR]]) : (memref<4xf32>, f32) -> (memref<4xf32>, f32)
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[R]]#0 restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK:         return %[[T]], %[[R]]#1 : tensor<4xf32>, f32
// CHECK:       func.func private @step__gpu_loops(%{{.*}}: memref<4xf32> {ga.batch = 0 : i64}, %{{.*}}: f32) -> (memref<4xf32>, f32)
func.func @step(%w: memref<4xf32> {ga.batch = 0 : i64}, %lr: f32) -> (memref<4xf32>, f32) {
  return %w, %lr : memref<4xf32>, f32
}

// Functions without memrefs in their signature, private ones and
// declarations are left alone.
// CHECK-LABEL: func.func @scalars(%{{.*}}: f32) -> f32
// CHECK-NEXT:    return
func.func @scalars(%x: f32) -> f32 {
  return %x : f32
}

// CHECK-LABEL: func.func private @helper(%{{.*}}: memref<4xf32>)
// CHECK-NEXT:    return
func.func private @helper(%x: memref<4xf32>) {
  return
}

// CHECK: func.func private @external(memref<4xf32>)
func.func private @external(memref<4xf32>)
