// RUN: not ga-opt %s -ga-cleanup 2>&1 | FileCheck %s
// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-cleanup

// The cleanup never changes what a function computes, so it has no error of
// its own; malformed input is reported by the verifier, at its location,
// before the pass runs and nothing is written.
// CHECK: ga-cleanup-invalid.mlir:[[@LINE+6]]:8: error: 'scf.for' op 0-th region iter_arg and 0-th yielded value have different type

func.func @bad_yield(%x: tensor<10xf32>) -> tensor<10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{0-th region iter_arg and 0-th yielded value have different type: 'tensor<10xf32>' != 'tensor<5xf32>'}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %x) -> tensor<10xf32> {
    %e = tensor.empty() : tensor<5xf32>
    scf.yield %e : tensor<5xf32>
  }
  return %r : tensor<10xf32>
}
