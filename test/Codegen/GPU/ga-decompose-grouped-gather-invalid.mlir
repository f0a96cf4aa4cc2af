// RUN: ga-opt %s -ga-decompose-grouped-gather -split-input-file -verify-diagnostics | FileCheck %s

// The pass has no error of its own: every ga.grouped_matmul the verifier
// accepts (tensors, static groups) has a decomposition, and other ops are
// left as they are, without a diagnostic.

// CHECK-LABEL: func.func @no_grouped
// CHECK: linalg.matmul
func.func @no_grouped(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// An index-typed group of ends: cast in the body, no error.
// CHECK-LABEL: func.func @index_ends
// CHECK: arith.index_cast
// CHECK-NOT: ga.grouped_matmul
func.func @index_ends(%x: tensor<6x3xf64>, %w: tensor<2x3x2xf64>, %e: tensor<2xindex>, %y: tensor<6x2xf64>) -> tensor<6x2xf64> {
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<6x3xf64>, tensor<2x3x2xf64>, tensor<2xindex> into tensor<6x2xf64>
  return %r : tensor<6x2xf64>
}
