// RUN: ga-opt %s -convert-linalg-to-blas -split-input-file -verify-diagnostics | FileCheck %s

// What CBLAS gemm cannot compute is left to the loop lowering, without a
// diagnostic and without a declaration: integers, tensors (before
// bufferization), a batch dimension that is not outermost in every operand
// and rows that are not contiguous.

// CHECK-NOT: cblas
// CHECK-LABEL: func.func @integers
// CHECK:         linalg.matmul
func.func @integers(%a: memref<4x5xi32>, %b: memref<5x3xi32>, %c: memref<4x3xi32>) {
  linalg.matmul ins(%a, %b : memref<4x5xi32>, memref<5x3xi32>) outs(%c : memref<4x3xi32>)
  return
}

// -----

// CHECK-LABEL: func.func @tensors
// CHECK:         linalg.matmul
func.func @tensors(%a: tensor<4x5xf32>, %b: tensor<5x3xf32>, %c: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32>) outs(%c : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// A's batch dimension in the middle: no batch stride of whole matrices.
// CHECK-LABEL: func.func @batch_inside
// CHECK:         linalg.generic
func.func @batch_inside(%a: memref<4x2x5xf32>, %b: memref<2x5x3xf32>, %c: memref<2x4x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (m, b, k)>,
                                   affine_map<(b, m, n, k) -> (b, k, n)>,
                                   affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x2x5xf32>, memref<2x5x3xf32>) outs(%c : memref<2x4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @strided_rows
// CHECK:         linalg.matmul
func.func @strided_rows(%a: memref<4x5xf32, strided<[10, 2]>>, %b: memref<5x3xf32>, %c: memref<4x3xf32>) {
  linalg.matmul ins(%a, %b : memref<4x5xf32, strided<[10, 2]>>, memref<5x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// -----

// A function of the module with the name of a CBLAS gemm and another type is
// an error at it: the calls would not match it.
// expected-error @+1 {{'func.func' op has the name of a CBLAS function with another type; expected '(i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, !llvm.ptr, i32, f64, !llvm.ptr, i32) -> ()'}}
func.func private @cblas_dgemm(i32)
func.func @clash(%a: memref<4x5xf64>, %b: memref<5x3xf64>, %c: memref<4x3xf64>) {
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c : memref<4x3xf64>)
  return
}
