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

// What the library does not take stays a linalg op for the generated
// kernels: f64, an operand whose rows are not contiguous, a bf16 output (the
// original rounds every partial sum to bf16), a batch dimension that is not
// the outermost of every operand.
// CHECK-LABEL: func.func @left_alone(
// CHECK:         linalg.matmul
// CHECK:         linalg.matmul
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK-NOT:     call @gaCublasLt
func.func @left_alone(%d: memref<4x8xf64>, %e: memref<8x4xf64>, %f: memref<4x4xf64>,
                      %g: memref<4x8xf32, strided<[16, 2]>>, %h: memref<8x4xf32>, %i: memref<4x4xf32>,
                      %j: memref<4x8xbf16>, %k: memref<8x4xbf16>, %l: memref<4x4xbf16>,
                      %x: memref<4x2x8xf32>, %y: memref<2x8x4xf32>, %z: memref<2x4x4xf32>) {
  linalg.matmul ins(%d, %e : memref<4x8xf64>, memref<8x4xf64>) outs(%f : memref<4x4xf64>)
  linalg.matmul ins(%g, %h : memref<4x8xf32, strided<[16, 2]>>, memref<8x4xf32>) outs(%i : memref<4x4xf32>)
  linalg.matmul ins(%j, %k : memref<4x8xbf16>, memref<8x4xbf16>) outs(%l : memref<4x4xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (m, b, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x2x8xf32>, memref<2x8x4xf32>) outs(%z : memref<2x4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Attention's scores S = Q K^T per batch (K stored [b][n][k]: B transposed),
// after a zero fill: one strided-batched call, beta = 0, each operand with
// its batch stride (elements), batch count 4.
// CHECK-LABEL: func.func private @gaCublasLtMatmulStridedBatched(i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i32, i32, f32, f32)
// CHECK-LABEL: func.func @attention_scores(
// CHECK-NOT:     linalg.
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         call @gaCublasLtMatmulStridedBatched(%c0_i32, %c1_i32, %c6_i64, %c6_i64, %c8_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c6_i64, %c36_i64, %c4_i64, %c0_i32, %c0_i32, %[[ONE]], %[[ZERO]])
// CHECK-NOT:     linalg.
func.func @attention_scores(%q: memref<4x6x8xf32>, %k: memref<4x6x8xf32>, %s: memref<4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<4x6x6xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x6x8xf32>, memref<4x6x8xf32>) outs(%s : memref<4x6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// The gradient of P V with respect to V, accumulated (dV += P^T dO): A
// transposed, beta = 1.
// CHECK-LABEL: func.func @attention_value_gradient(
// CHECK:         call @gaCublasLtMatmulStridedBatched(%c1_i32, %c0_i32, %c6_i64, %c8_i64, %c6_i64, %{{.*}}, %c6_i64, %c36_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c8_i64, %c48_i64, %c2_i64, %c0_i32, %c0_i32, %[[ONE:.*]], %[[ONE]])
func.func @attention_value_gradient(%p: memref<2x6x6xf32>, %do: memref<2x6x8xf32>, %dv: memref<2x6x8xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%p, %do : memref<2x6x6xf32>, memref<2x6x8xf32>) outs(%dv : memref<2x6x8xf32>)
  return
}
