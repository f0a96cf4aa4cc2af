// RUN: ga-opt %s -ga-widen-accumulators -split-input-file -verify-diagnostics | FileCheck %s

// Nothing that cannot be widened faithfully is rewritten, and nothing is
// reported: a payload that reads a bf16 value through a bitcast (its bits,
// not its value), accumulators that are already f32 or integers, ops
// without a reduction loop, and ops on buffers keep their types.

// CHECK-LABEL: func.func @bitcast
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<bf16>)
// CHECK-NOT:     f32
func.func @bitcast(%x: tensor<8xbf16>, %init: tensor<bf16>) -> tensor<bf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xbf16>) outs(%init : tensor<bf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %bits = arith.bitcast %v : bf16 to i16
    %back = arith.bitcast %bits : i16 to bf16
    %s = arith.addf %o, %back : bf16
    linalg.yield %s : bf16
  } -> tensor<bf16>
  return %r : tensor<bf16>
}

// -----

// CHECK-LABEL: func.func @not_low_or_not_reducing
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<i32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} outs(%{{.*}} : tensor<8xbf16>)
// CHECK-NOT:     arith.extf
func.func @not_low_or_not_reducing(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>, %c: tensor<4x3xf32>,
                                   %n: tensor<8xi32>, %ni: tensor<i32>, %x: tensor<8xbf16>)
    -> (tensor<4x3xf32>, tensor<i32>, tensor<8xbf16>) {
  %p = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%c : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%n : tensor<8xi32>) outs(%ni : tensor<i32>) {
  ^bb0(%v: i32, %o: i32):
    %t = arith.addi %o, %v : i32
    linalg.yield %t : i32
  } -> tensor<i32>
  %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xbf16>) outs(%x : tensor<8xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %t = arith.addf %v, %v : bf16
    linalg.yield %t : bf16
  } -> tensor<8xbf16>
  return %p, %s, %d : tensor<4x3xf32>, tensor<i32>, tensor<8xbf16>
}

// -----

// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xbf16>, memref<8x3xbf16>) outs(%{{.*}} : memref<4x3xbf16>)
// CHECK-NOT:     f32
func.func @buffers(%a: memref<4x8xbf16>, %b: memref<8x3xbf16>, %c: memref<4x3xbf16>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x3xbf16>) outs(%c : memref<4x3xbf16>)
  return
}
