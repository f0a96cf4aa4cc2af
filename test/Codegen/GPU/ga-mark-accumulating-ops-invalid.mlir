// RUN: ga-opt %s -ga-mark-accumulating-ops -split-input-file -verify-diagnostics | FileCheck %s

// The pass has no error of its own: what is not an update of a tensor
// accumulator carried by scf.for is left unmarked, without a diagnostic.

// Buffers carried by a loop (after bufferization) are not accumulators the
// pass knows: it runs on tensors.
// CHECK-LABEL: func.func @memref_iter_arg
// CHECK-NOT: ga.accumulates
func.func @memref_iter_arg(%x: memref<16xf32>, %init: memref<16xf32>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init) -> (memref<16xf32>) {
    linalg.add ins(%x, %a : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
    scf.yield %a : memref<16xf32>
  }
  return %r : memref<16xf32>
}

// -----

// The carried tensor only read (an input), the result written elsewhere.
// CHECK-LABEL: func.func @read_only
// CHECK-NOT: ga.accumulates
func.func @read_only(%x: tensor<16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<16xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init) -> (tensor<16xf32>) {
    %s = linalg.add ins(%x, %a : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// No loop: an op that writes into a function argument is no accumulation.
// CHECK-LABEL: func.func @no_loop
// CHECK-NOT: ga.accumulates
func.func @no_loop(%x: tensor<16xf32>, %acc: tensor<16xf32>) -> tensor<16xf32> {
  %s = linalg.add ins(%x, %acc : tensor<16xf32>, tensor<16xf32>) outs(%acc : tensor<16xf32>) -> tensor<16xf32>
  return %s : tensor<16xf32>
}
