// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-isolate-library-products))' -verify-diagnostics | FileCheck %s

// A ga.library_product on an op that no library lowering takes (a claim that
// a rewrite made outdated, or a hand-written one) is refused at the op.
func.func @not_a_product(%a: tensor<4x3xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op is marked 'ga.library_product' but is not a matrix product that the library lowerings take}}
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x3xf32>) outs(%y : tensor<4xf32>) attrs = {ga.library_product} {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// Products on buffers are left alone (the library lowerings take them as
// they are), without a diagnostic.
// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul ins
func.func @buffers(%a: memref<4x3xf32>, %w: memref<5x3xf32>, %t: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.transpose ins(%w : memref<5x3xf32>) outs(%t : memref<3x5xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}
