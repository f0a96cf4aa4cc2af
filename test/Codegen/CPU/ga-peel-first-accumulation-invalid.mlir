// RUN: ga-opt %s -ga-peel-first-accumulation -split-input-file -verify-diagnostics | FileCheck %s

// Loops the pass cannot prove to accumulate a product into zeros at least
// twice are left alone, without a diagnostic: a dynamic trip count, a single
// trip, an accumulator that starts at one, and an element-wise accumulation.

// CHECK-LABEL: func.func @dynamic_trips
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
func.func @dynamic_trips(%a: tensor<4x5xf32>, %b: tensor<5x3xf32>, %n: index) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
    %p = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %p : tensor<4x3xf32>
  }
  return %g : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @one_trip
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
func.func @one_trip(%a: tensor<4x5xf32>, %b: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
    %p = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %p : tensor<4x3xf32>
  }
  return %g : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @ones
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
func.func @ones(%a: tensor<4x5xf32>, %b: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
    %p = linalg.matmul ins(%a, %b : tensor<4x5xf32>, tensor<5x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %p : tensor<4x3xf32>
  }
  return %g : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise
// CHECK-COUNT-1: scf.for
// CHECK-NOT:     scf.for
func.func @elementwise(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
    %p = linalg.add ins(%x, %acc : tensor<4x3xf32>, tensor<4x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %p : tensor<4x3xf32>
  }
  return %g : tensor<4x3xf32>
}
