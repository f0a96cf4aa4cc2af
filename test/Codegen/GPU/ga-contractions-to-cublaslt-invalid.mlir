// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-contractions-to-cublaslt

// The pass names no runtime function (--ga-lower-library-ops does): a
// function of the module with the name of one, of another type, is not its
// concern, and the product still becomes a `ga.blas_matmul`.
func.func private @gaCublasLtMatmul(i32)
func.func @step(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// Products into f16 or f64 are left to the generated kernels, silently: no
// diagnostic.
func.func @left(%a: memref<4x8xf16>, %b: memref<8x4xf16>, %c: memref<4x4xf16>) {
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x4xf16>) outs(%c : memref<4x4xf16>)
  return
}
