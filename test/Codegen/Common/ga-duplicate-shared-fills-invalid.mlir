// RUN: not ga-opt %s -ga-duplicate-shared-fills="kind=bogus" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: ga-opt %s -ga-duplicate-shared-fills -split-input-file -verify-diagnostics | FileCheck %s

// An unknown kind of fill is refused by the option parser.
// KIND: for the --kind option: Cannot find option named 'bogus'!

// Fills on buffers are not touched (they are not values that can be
// shared), and a fill with one use stays as it is: no diagnostic.
// CHECK-LABEL: func.func @buffers
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT:     linalg.fill
func.func @buffers(%m: memref<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  linalg.fill ins(%c0 : f32) outs(%m : memref<4xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @single_use
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT:     linalg.fill
func.func @single_use() -> tensor<4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}
