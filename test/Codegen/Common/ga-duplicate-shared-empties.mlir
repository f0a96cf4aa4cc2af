// RUN: ga-opt %s -ga-duplicate-shared-empties="max-uses=2" -split-input-file | FileCheck %s
// RUN: ga-opt %s -ga-duplicate-shared-empties="max-uses=1" -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: ga-opt %s -ga-duplicate-shared-empties -split-input-file | FileCheck %s --check-prefix=DEFAULT

// One empty is the destination of three element-wise ops (as CSE leaves
// it). With max-uses=2 the first two keep it and the third gets its own,
// right before it; with max-uses=1 each has its own; by default (64 uses)
// nothing changes.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = linalg.log ins(%[[A]] : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    linalg.add ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NOT:     tensor.empty
// ONE-LABEL: func.func @chain
// ONE-NEXT:    %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// ONE-NEXT:    %[[A:.*]] = linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// ONE-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// ONE-NEXT:    %[[B:.*]] = linalg.log ins(%[[A]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// ONE-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// ONE-NEXT:    linalg.add ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E2]] : tensor<4xf32>)
// ONE-NOT:     tensor.empty
// DEFAULT-LABEL: func.func @chain
// DEFAULT-COUNT-1: tensor.empty
// DEFAULT-NOT:     tensor.empty
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.log ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Dynamic sizes: every copy takes the original's size operand. The fills
// that ga-duplicate-shared-fills made all write into one empty.
// CHECK-LABEL: func.func @dynamic
// DEFAULT-LABEL: func.func @dynamic
// ONE-LABEL: func.func @dynamic
// ONE-SAME:    (%[[N:.*]]: index
// ONE:         %[[E0:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// ONE-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<?xf32>)
// ONE-NEXT:    %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// ONE-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<?xf32>)
// ONE-NOT:     tensor.empty
func.func @dynamic(%n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %o = linalg.fill ins(%c1 : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %z, %o : tensor<?xf32>, tensor<?xf32>
}

// -----

// Uses are grouped in program order, a loop's body where the loop is. A
// group whose first use is inside the loop gets its empty before the loop,
// in the block of the original: the allocation does not move into the loop.
// With max-uses=2: the exp and the add in the loop share the original; the
// log after the loop gets its own.
// CHECK-LABEL: func.func @loop
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    scf.for
// CHECK-NOT:       tensor.empty
// CHECK:           linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT:      linalg.add ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK:         }
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    linalg.log ins(%{{.*}} : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// With max-uses=1 the add's empty goes before the loop too.
// ONE-LABEL: func.func @loop
// ONE:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// ONE-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// ONE-NEXT:    scf.for
// ONE-NOT:       tensor.empty
// ONE:           linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// ONE-NEXT:      linalg.add ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// ONE:         }
// ONE-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// ONE-NEXT:    linalg.log ins(%{{.*}} : tensor<4xf32>) outs(%[[E2]] : tensor<4xf32>)
func.func @loop(%x: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %acc) -> tensor<4xf32> {
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.add ins(%a, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  %l = linalg.log ins(%r : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %l : tensor<4xf32>
}

// -----

// Nothing changes, even with max-uses=1: an empty with one use, an empty
// with none (left to canonicalization), buffers (not values that can be
// shared).
// ONE-LABEL: func.func @single_use
// ONE-COUNT-2: tensor.empty
// ONE-NOT:     tensor.empty
// ONE-COUNT-1: memref.alloc
// ONE-NOT:     memref.alloc
func.func @single_use(%x: tensor<4xf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  %unused = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.exp ins(%m : memref<4xf32>) outs(%b : memref<4xf32>)
  linalg.log ins(%m : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.copy %b, %m : memref<4xf32> to memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %a : tensor<4xf32>
}
