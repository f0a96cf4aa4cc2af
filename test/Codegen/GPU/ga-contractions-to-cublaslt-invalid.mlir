// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-contractions-to-cublaslt

// A function of the module that has the name of the runtime function, with
// another type: the calls would not match it.
// expected-error @+1 {{'func.func' op has the name of the cuBLASLt runtime function with another type}}
func.func private @gaCublasLtMatmul(i32)
func.func @step(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// The same for the strided-batched entry point.
// expected-error @+1 {{'func.func' op has the name of the cuBLASLt runtime function with another type}}
func.func private @gaCublasLtMatmulStridedBatched(i32, i32, i64)
func.func @step(%a: memref<2x4x8xf32>, %b: memref<2x8x4xf32>, %c: memref<2x4x4xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x4xf32>) outs(%c : memref<2x4x4xf32>)
  return
}
