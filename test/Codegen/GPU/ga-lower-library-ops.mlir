// RUN: ga-opt %s -split-input-file -ga-lower-library-ops -canonicalize | FileCheck %s

// A weight gradient accumulated in place (dW += X^T dY): beta = 1, A
// transposed (X stored [k][m]), leading dimensions from the layouts, no
// bias (a null pointer), a null stream (no async dependency: the loop stage
// run on the CPU).
// CHECK-LABEL: func.func private @gaCublasLtMatmul(!llvm.ptr, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr)
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @gaCublasLtMatmul(%[[NULL]], %[[T]], %[[F32]], %c16_i64, %c32_i64, %c6_i64, %{{.*}}, %c16_i64, %{{.*}}, %c32_i64, %{{.*}}, %c32_i64, %[[F32]], %[[F32]], %[[ONE]], %[[ONE]], %[[NULL]]) {ga.accumulates}
// CHECK-NOT:     ga.blas_matmul
func.func @weight_gradient(%x: memref<6x16xf32>, %dy: memref<6x32xf32>, %acc: memref<16x32xf32>) {
  ga.blas_matmul %x, %dy, %acc {accumulate, transpose_lhs, ga.accumulates} : memref<6x16xf32>, memref<6x32xf32>, memref<16x32xf32>
  return
}

// -----

// On the step's stream: the token is the call's stream, and what followed
// the op's token follows it. bf16 inputs (14), beta = 0, a bias pointer,
// and a view with a row stride of 32 (its leading dimension).
// CHECK-LABEL: func.func private @gaCublasLtMatmul(!gpu.async.token, i32
// CHECK-LABEL: func.func @on_stream(
// CHECK-SAME:      %[[B:[^:]+]]: memref<4xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[BF16:.*]] = arith.constant 14 : i32
// CHECK:         %[[T0:.*]] = gpu.wait async
// CHECK:         %[[IPB:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-NEXT:    %[[IB:.*]] = arith.index_cast %[[IPB]]
// CHECK-NEXT:    %[[PB:.*]] = llvm.inttoptr %[[IB]]
// CHECK-NEXT:    call @gaCublasLtMatmul(%[[T0]], %c0_i32, %c0_i32, %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %{{.*}}, %c4_i64, %{{.*}}, %c32_i64, %[[BF16]], %c0_i32, %[[ONE]], %[[ZERO]], %[[PB]])
// CHECK-NOT:     ga.blas_matmul
func.func @on_stream(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x32xf32>, %bias: memref<4xf32>) {
  %t0 = gpu.wait async
  %y = memref.subview %c[0, 0] [8, 4] [1, 1] : memref<8x32xf32> to memref<8x4xf32, strided<[32, 1]>>
  %t1 = ga.blas_matmul async [%t0] %a, %b, %y bias(%bias : memref<4xf32>) : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xf32, strided<[32, 1]>>
  gpu.wait [%t1]
  return
}

// -----

// Attention's scores per batch (K stored [b][n][k]: B transposed): the
// strided-batched entry point, each operand with its batch stride
// (elements), batch count 4, beta = 0.
// CHECK-LABEL: func.func private @gaCublasLtMatmulStridedBatched(!llvm.ptr, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i32, i32, f32, f32)
// CHECK-LABEL: func.func @attention_scores(
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         call @gaCublasLtMatmulStridedBatched(%{{.*}}, %c0_i32, %c1_i32, %c6_i64, %c6_i64, %c8_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c6_i64, %c36_i64, %c4_i64, %c0_i32, %c0_i32, %[[ONE]], %[[ZERO]])
func.func @attention_scores(%q: memref<4x6x8xf32>, %k: memref<4x6x8xf32>, %s: memref<4x6x6xf32>) {
  ga.blas_matmul %q, %k, %s {transpose_rhs} : memref<4x6x8xf32>, memref<4x6x8xf32>, memref<4x6x6xf32>
  return
}

// -----

// A matrix-vector product as a GEMM with N = 1 (leading dimension 1).
// CHECK-LABEL: func.func @matvec(
// CHECK:         call @gaCublasLtMatmul(%{{.*}}, %c0_i32, %c0_i32, %c6_i64, %c1_i64, %c16_i64, %{{.*}}, %c16_i64, %{{.*}}, %c1_i64, %{{.*}}, %c1_i64,
func.func @matvec(%a: memref<6x16xf32>, %x: memref<16x1xf32>, %y: memref<6x1xf32>) {
  ga.blas_matmul %a, %x, %y : memref<6x16xf32>, memref<16x1xf32>, memref<6x1xf32>
  return
}
