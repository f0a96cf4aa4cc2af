// RUN: ga-opt %s --ga-lower-to-cpu="share-buffers=1" -mlir-print-ir-after=ga-share-buffers -o /dev/null 2>&1 | FileCheck %s
// RUN: ga-opt %s --ga-lower-to-cpu -mlir-print-ir-after=buffer-loop-hoisting -o /dev/null 2>&1 | FileCheck %s --check-prefix=APART

// share-buffers=1 runs --ga-share-buffers with pack=true: two temporaries of
// different sizes (the row sums of %x and of %y), each dead before the
// other is written, take offset 0 of one 128-byte arena, not buffers of
// 128 and 64 bytes. Without the option, each keeps its own buffer.

// CHECK-LABEL: IR Dump After ShareBuffers
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK:         memref.view %[[ARENA]][%[[O:.*]]][] : memref<128xi8> to memref<32xf32>
// CHECK:         memref.view %[[ARENA]][%[[O]]][] : memref<128xi8> to memref<16xf32>
// CHECK-NOT:     memref.alloc() {{.*}}: memref<{{32|16}}xf32>

// APART-LABEL: IR Dump After BufferLoopHoisting
// APART-NOT:     memref.view
// APART-DAG:     memref<32xf32>
// APART-DAG:     memref<16xf32>
// APART-NOT:     memref.view

#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#id = affine_map<(i) -> (i)>
#red = affine_map<(i) -> ()>
func.func @two_sizes(%x: tensor<32x4xf32>, %y: tensor<16x4xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<32xf32>
  %fa = linalg.fill ins(%zero : f32) outs(%ea : tensor<32xf32>) -> tensor<32xf32>
  %a = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32x4xf32>) outs(%fa : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %za = tensor.empty() : tensor<f32>
  %ia = linalg.fill ins(%zero : f32) outs(%za : tensor<f32>) -> tensor<f32>
  %sa = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]} ins(%a : tensor<32xf32>) outs(%ia : tensor<f32>) {
  ^bb0(%p: f32, %out: f32):
    %m = arith.mulf %p, %p : f32
    %v = arith.addf %m, %out : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %eb = tensor.empty() : tensor<16xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<16xf32>) -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<16x4xf32>) outs(%fb : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %zb = tensor.empty() : tensor<f32>
  %ib = linalg.fill ins(%zero : f32) outs(%zb : tensor<f32>) -> tensor<f32>
  %sb = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]} ins(%b : tensor<16xf32>) outs(%ib : tensor<f32>) {
  ^bb0(%p: f32, %out: f32):
    %m = arith.mulf %p, %p : f32
    %v = arith.addf %m, %out : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  return %sa, %sb : tensor<f32>, tensor<f32>
}
