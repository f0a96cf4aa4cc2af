// RUN: ga-opt %s -split-input-file --ga-device-iteration-index -verify-diagnostics

// A slice that the library product writes (its output, by its memory
// effects) cannot be staged into a copy: it stays on the host, and
// ga-capture-cuda-graphs will refuse the loop.
func.func @written(%y: memref<8x4xf32>, %w: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %o = arith.muli %i, %c2 : index
    // expected-remark @below {{not staged for a library call: 'ga.blas_matmul' in the loop may write the sliced buffer}}
    %s = memref.subview %y[%o, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
    %a = memref.subview %w[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
    ga.blas_matmul %a, %w, %s {accumulate} : memref<2x4xf32, strided<[4, 1]>>, memref<4x4xf32>, memref<2x4xf32, strided<[4, 1], offset: ?>>
  }
  return
}

// -----

// A micro-batch of dynamic size (a remainder folded into the loop): the
// slice has no fixed buffer to be staged into.
func.func @dynamic(%x: memref<?x4xf32>, %w: memref<4x4xf32>, %y: memref<?x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %m = arith.minui %i, %n : index
    // expected-remark @below {{not staged for a library call: the micro-batch slice has a dynamic shape}}
    %s = memref.subview %x[%i, 0] [%m, 4] [1, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
    ga.blas_matmul %s, %w, %y : memref<?x4xf32, strided<[4, 1], offset: ?>>, memref<4x4xf32>, memref<?x4xf32>
  }
  return
}
