// RUN: not ga-opt %s -ga-fold-unit-dims="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: ga-opt %s -ga-fold-unit-dims -split-input-file -verify-diagnostics | FileCheck %s

// The pass has no options: anything given is refused by the option parser.
// OPT: no such option bogus

// Generics on buffers are left as they are (the folding rewrites tensors
// only), and nothing is reported.
// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : memref<2x1xf32>)
func.func @buffers(%x: memref<2x1xf32>, %y: memref<2x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x1xf32>) outs(%y : memref<2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A dynamic dimension is not a unit dimension: nothing to fold.
// CHECK-LABEL: func.func @dynamic
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4xf32>)
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
