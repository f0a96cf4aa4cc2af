// RUN: ga-opt %s -ga-widen-i1-tensors -split-input-file -verify-diagnostics | FileCheck %s

// Nothing without an i8 form is rewritten, and nothing is reported: a mask
// that is a function argument, a mask that only leaves the function (an i1
// copy would cost a pass more), and ops on buffers keep their i1 types.

// CHECK-LABEL: func.func @argument_mask
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16xi1>, tensor<16xf32>)
// CHECK-NOT:     xi8>
func.func @argument_mask(%m: tensor<16xi1>, %x: tensor<16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %out = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%m, %x : tensor<16xi1>, tensor<16xf32>) outs(%out : tensor<16xf32>) {
  ^bb0(%a: i1, %v: f32, %o: f32):
    %s = arith.select %a, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @only_returned
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<16xi1>)
// CHECK-NOT:     xi8>
func.func @only_returned(%x: tensor<16xf32>) -> tensor<16xi1> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xi1>) {
  ^bb0(%v: f32, %o: i1):
    %gt = arith.cmpf ogt, %v, %zero : f32
    linalg.yield %gt : i1
  } -> tensor<16xi1>
  return %m : tensor<16xi1>
}

// -----

// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : memref<16xi1>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<16xi1>, memref<16xf32>)
// CHECK-NOT:     xi8>
func.func @buffers(%x: memref<16xf32>, %m: memref<16xi1>, %y: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%m : memref<16xi1>) {
  ^bb0(%v: f32, %o: i1):
    %gt = arith.cmpf ogt, %v, %zero : f32
    linalg.yield %gt : i1
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%m, %x : memref<16xi1>, memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: i1, %v: f32, %o: f32):
    %s = arith.select %a, %v, %zero : f32
    linalg.yield %s : f32
  }
  return
}
