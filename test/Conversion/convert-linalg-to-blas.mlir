// RUN: ga-opt %s -convert-linalg-to-blas -split-input-file | FileCheck %s

// A product into a zero-filled C: the fill is dropped, beta = 0; one
// declaration per routine.
// CHECK-LABEL: func.func private @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// CHECK-LABEL: func.func @matmul_zero
// CHECK-NOT:     linalg.fill
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ROW:.*]] = arith.constant 101 : i32
// CHECK-NEXT:    %[[NT:.*]] = arith.constant 111 : i32
// CHECK:         call @cblas_sgemm(%[[ROW]], %[[NT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]],
// CHECK-NOT:     linalg.matmul
func.func @matmul_zero(%a: memref<4x5xf32>, %b: memref<5x3xf32>, %c: memref<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// -----

// Accumulation into C (beta = 1) with a transposed B (stored [n][k]), f64.
// CHECK-LABEL: func.func @matmul_acc_transposed
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-DAG:     %[[NT:.*]] = arith.constant 111 : i32
// CHECK-DAG:     %[[T:.*]] = arith.constant 112 : i32
// CHECK:         call @cblas_dgemm(%{{.*}}, %[[NT]], %[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]],
func.func @matmul_acc_transposed(%a: memref<4x5xf64>, %b: memref<3x5xf64>, %c: memref<4x3xf64>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<4x5xf64>, memref<3x5xf64>) outs(%c : memref<4x3xf64>)
  return
}

// -----

// A read of C between the fill and the product keeps the fill: beta = 1.
// CHECK-LABEL: func.func @fill_read_before
// CHECK:         linalg.fill
// CHECK:         memref.load
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @cblas_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]],
func.func @fill_read_before(%a: memref<4x5xf32>, %b: memref<5x3xf32>, %c: memref<4x3xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  %v = memref.load %c[%i, %i] : memref<4x3xf32>
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x3xf32>) outs(%c : memref<4x3xf32>)
  return %v : f32
}
