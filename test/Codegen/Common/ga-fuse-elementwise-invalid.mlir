// RUN: not ga-opt %s -ga-fuse-elementwise="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not ga-opt %s -ga-fuse-elementwise="max-recompute-ops=-1" 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: not ga-opt %s -ga-fuse-elementwise="recompute-shared=maybe" 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not ga-opt %s -ga-fuse-elementwise="fuse-kept=2" 2>&1 | FileCheck %s --check-prefix=KEPT
// RUN: ga-opt %s -ga-fuse-elementwise -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ga-opt %s -ga-fuse-elementwise="fuse-kept=1" -split-input-file -verify-diagnostics | FileCheck %s

// Unknown options and bad values are refused by the option parser.
// OPT: no such option bogus
// BOUND: for the --max-recompute-ops option: '-1' value invalid for uint argument!
// FLAG: for the --recompute-shared option: 'maybe' is invalid value for boolean argument!
// KEPT: for the --fuse-kept option: '2' is invalid value for boolean argument!

// Generics on buffers are not fused (the patterns apply to tensors only), and
// nothing is reported: the pass refuses a fusion silently, by leaving the ops
// as they are.
// CHECK-LABEL: func.func @buffers
// CHECK-COUNT-2: linalg.generic
func.func @buffers(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %o, %a : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%y : memref<4xf32>) outs(%z : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.tanh %a : f32
    linalg.yield %m : f32
  }
  return
}
