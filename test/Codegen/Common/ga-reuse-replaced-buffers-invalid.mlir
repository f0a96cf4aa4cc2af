// RUN: not ga-opt %s -ga-reuse-replaced-buffers="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: ga-opt %s -ga-reuse-replaced-buffers -verify-diagnostics | FileCheck %s

// An unknown option is refused by the option parser.
// OPTION: no such option bogus

// Not a loop-carried value (the loop yields its argument unchanged, and
// the op's result is not yielded): nothing is diagnosed and nothing changes.
// CHECK-LABEL: func.func @not_carried(
// CHECK:         outs(%{{.*}} : tensor<4xf32>)
// CHECK:         scf.yield %arg
func.func @not_carried(%init: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %unused = linalg.exp ins(%acc : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %acc : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
