// RUN: ga-opt %s --ga-check-constant-indices | FileCheck %s

// Dimension indices within the rank, constant or not, pass unchanged (also
// of unranked sources, whose rank is unknown here).
// CHECK-LABEL: func.func @in_range
// CHECK-COUNT-4: dim
func.func @in_range(%t: tensor<8x?xf32>, %m: memref<4xf32>, %u: tensor<*xf32>, %i: index) -> (index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.dim %t, %c1 : tensor<8x?xf32>
  %b = memref.dim %m, %c0 : memref<4xf32>
  %c = tensor.dim %t, %i : tensor<8x?xf32>
  %d = tensor.dim %u, %c1 : tensor<*xf32>
  return %a, %b, %c, %d : index, index, index, index
}

// Casts that refine or forget static sizes without contradicting the shape
// their chain starts from pass unchanged (a dynamic source can become any
// static size; unranked values are left alone).
// CHECK-LABEL: func.func @casts
// CHECK-COUNT-4: tensor.cast
func.func @casts(%x: tensor<8x4xf32>, %y: tensor<?x4xf32>, %u: tensor<*xf32>) -> (tensor<8x4xf32>, tensor<3x4xf32>, tensor<2xf32>) {
  %a = tensor.cast %x : tensor<8x4xf32> to tensor<?x?xf32>
  %b = tensor.cast %a : tensor<?x?xf32> to tensor<8x4xf32>
  %c = tensor.cast %y : tensor<?x4xf32> to tensor<3x4xf32>
  %d = tensor.cast %u : tensor<*xf32> to tensor<2xf32>
  return %b, %c, %d : tensor<8x4xf32>, tensor<3x4xf32>, tensor<2xf32>
}
