// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-lower-library-ops

// A function of the module that has the name of the runtime function, with
// another type: the calls would not match it.
// expected-error @+1 {{'func.func' op has the name of the cuBLASLt runtime function with another type}}
func.func private @gaCublasLtMatmul(i32)
func.func @step(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  ga.blas_matmul %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  return
}

// -----

// The same for the strided-batched entry point.
// expected-error @+1 {{'func.func' op has the name of the cuBLASLt runtime function with another type}}
func.func private @gaCublasLtMatmulStridedBatched(i32, i32, i64)
func.func @step(%a: memref<2x4x8xf32>, %b: memref<2x8x4xf32>, %c: memref<2x4x4xf32>) {
  ga.blas_matmul %a, %b, %c : memref<2x4x8xf32>, memref<2x8x4xf32>, memref<2x4x4xf32>
  return
}

// -----

// One product on the step's stream, one with none: one declaration cannot
// take both.
func.func @mixed(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  %t0 = gpu.wait async
  // expected-note @+1 {{the other product}}
  %t1 = ga.blas_matmul async [%t0] %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  gpu.wait [%t1]
  // expected-error @+1 {{'ga.blas_matmul' op takes a '!llvm.ptr' stream where another product of the module takes a '!gpu.async.token' (one declaration of gaCublasLtMatmul)}}
  ga.blas_matmul %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  return
}

// -----

// A token with nothing to order it after: no stream to enqueue the call on.
func.func @unordered(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op returns a token but is ordered after none: the call of gaCublasLtMatmul has no stream to enqueue on}}
  %t = ga.blas_matmul async %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  gpu.wait [%t]
  return
}
