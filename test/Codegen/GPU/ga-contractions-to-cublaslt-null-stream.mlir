// RUN: ga-opt %s -ga-contractions-to-cublaslt=null-stream=1 -canonicalize | FileCheck %s

// null-stream=1 (the loop stage alone, run on the CPU against
// libga_cublaslt_cpu.so): the calls take a null stream as their first
// argument, the full ABI of GACublasLt.h.
// CHECK-DAG: func.func private @gaCublasLtMatmul(!llvm.ptr, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr)
// CHECK-DAG: func.func private @gaCublasLtMatmulStridedBatched(!llvm.ptr, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i32, i32, f32, f32)
// CHECK-LABEL: func.func @step(
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @gaCublasLtMatmul(%[[NULL]], %c0_i32, %c0_i32, %c4_i64, %c4_i64, %c8_i64,
// CHECK:         call @gaCublasLtMatmulStridedBatched(%[[NULL]], %c0_i32, %c0_i32, %c4_i64, %c4_i64, %c8_i64,
func.func @step(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>,
                %x: memref<2x4x8xf32>, %y: memref<2x8x4xf32>, %z: memref<2x4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.batch_matmul ins(%x, %y : memref<2x4x8xf32>, memref<2x8x4xf32>) outs(%z : memref<2x4x4xf32>)
  return
}
