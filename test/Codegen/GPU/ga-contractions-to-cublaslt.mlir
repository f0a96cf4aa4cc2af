// RUN: ga-opt %s -split-input-file -ga-contractions-to-cublaslt -canonicalize | FileCheck %s

// A weight gradient accumulated in place (dW += X^T dY over the micro-batch):
// one cuBLASLt product with beta = 1, A transposed (X stored [k][m]).
// CHECK-LABEL: func.func private @gaCublasLtMatmul(i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr)
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @gaCublasLtMatmul(%[[T]], %[[F32]], %c16_i64, %c32_i64, %c6_i64, %{{.*}}, %c16_i64, %{{.*}}, %c32_i64, %{{.*}}, %c32_i64, %[[F32]], %[[F32]], %[[ONE]], %[[ONE]], %[[NULL]])
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @weight_gradient(%x: memref<6x16xf32>, %dy: memref<6x32xf32>, %acc: memref<16x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : memref<6x16xf32>, memref<6x32xf32>) outs(%acc : memref<16x32xf32>)
  return
}

// -----

// A bf16 product into an f32 buffer right after its zero fill: beta = 0
// (the fill is dropped), inputs bf16 (14), output f32 (0).
// CHECK-LABEL: func.func @forward_bf16(
// CHECK-NOT:     linalg.fill
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[BF16:.*]] = arith.constant 14 : i32
// CHECK-DAG:     %[[F32:.*]] = arith.constant 0 : i32
// CHECK:         call @gaCublasLtMatmul(%[[F32]], %[[F32]], %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %{{.*}}, %c4_i64, %{{.*}}, %c4_i64, %[[BF16]], %[[F32]], %[[ONE]], %[[ZERO]], %{{.*}})
// CHECK-NOT:     linalg.
func.func @forward_bf16(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// What cuBLASLt cannot take stays a linalg op for the generated kernels: a
// batched product, f64, and an operand whose rows are not contiguous.
// CHECK-LABEL: func.func @left_alone(
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.matmul
// CHECK:         linalg.matmul
// CHECK-NOT:     call @gaCublasLtMatmul
func.func @left_alone(%a: memref<2x4x8xf32>, %b: memref<2x8x4xf32>, %c: memref<2x4x4xf32>,
                      %d: memref<4x8xf64>, %e: memref<8x4xf64>, %f: memref<4x4xf64>,
                      %g: memref<4x8xf32, strided<[16, 2]>>, %h: memref<8x4xf32>, %i: memref<4x4xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x4xf32>) outs(%c : memref<2x4x4xf32>)
  linalg.matmul ins(%d, %e : memref<4x8xf64>, memref<8x4xf64>) outs(%f : memref<4x4xf64>)
  linalg.matmul ins(%g, %h : memref<4x8xf32, strided<[16, 2]>>, memref<8x4xf32>) outs(%i : memref<4x4xf32>)
  return
}
