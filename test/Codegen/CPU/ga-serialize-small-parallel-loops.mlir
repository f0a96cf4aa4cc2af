// RUN: ga-opt %s -ga-serialize-small-parallel-loops="min-work=4096" -split-input-file | FileCheck %s
// RUN: ga-opt %s -ga-serialize-small-parallel-loops="min-work=0" -split-input-file | FileCheck %s --check-prefix=ZERO

// 64 iterations of 3 operations (and the terminator): 256 < 4096, one thread.
// With min-work=0 it stays parallel.
// CHECK-LABEL: func.func @small
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for %[[I:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:      memref.load %{{.*}}[%[[I]]]
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// ZERO-LABEL: func.func @small
// ZERO:         scf.parallel
func.func @small(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    %r = arith.addf %v, %v : f32
    memref.store %r, %y[%i] : memref<64xf32>
  }
  return
}

// -----

// 512 x 64 iterations of a nested loop of 8: kept, one flat region (the
// nested scf.parallel runs in the iteration's thread), parallel in its first
// dimension only (512 >= 64 iterations): the second runs in each iteration.
// CHECK-LABEL: func.func @large
// CHECK:         scf.parallel (%[[I:.*]]) = (%c0) to (%c512) step (%c1) {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c512 step %c8 {
// CHECK-NEXT:        scf.for %[[K:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:          arith.addi %[[J]], %[[K]]
// CHECK-NEXT:          memref.load %{{.*}}[%[[I]], %{{.*}}]
// CHECK-NOT:     scf.parallel
// ZERO-LABEL: func.func @large
// ZERO:         scf.parallel
// ZERO:           scf.for
func.func @large(%x: memref<512x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c512) step (%c1, %c8) {
    scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
      %jk = arith.addi %j, %k : index
      %v = memref.load %x[%i, %jk] : memref<512x512xf32>
      %r = arith.mulf %v, %v : f32
      memref.store %r, %x[%i, %jk] : memref<512x512xf32>
    }
  }
  return
}

// -----

// A single iteration is never a region, whatever its work: its nested loops
// are weighed in its place (here, one of 2048 x 4 operations: kept).
// CHECK-LABEL: func.func @single_iteration
// CHECK:         scf.for %{{.*}} = %c0 to %c1 step %c1 {
// CHECK-NEXT:      scf.parallel (%{{.*}}) = (%c0) to (%c2048) step (%c1) {
// CHECK-NOT:       scf.parallel
// ZERO-LABEL: func.func @single_iteration
// ZERO:         scf.for %{{.*}} = %c0 to %c1 step %c1 {
// ZERO-NEXT:      scf.parallel
func.func @single_iteration(%x: memref<1x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c2048) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<1x2048xf32>
      %r = math.exp %v : f32
      memref.store %r, %x[%i, %j] : memref<1x2048xf32>
    }
  }
  return
}

// -----

// Bounds known only at run time, or a call in the body: the work is not
// bounded, the loop stays parallel.
// CHECK-LABEL: func.func @unbounded
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK:           func.call @work
func.func private @work(index)
func.func @unbounded(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %x[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    func.call @work(%i) : (index) -> ()
  }
  return
}


// -----

// The stack buffer of an iteration (ga-split-row-reductions' lane buffer
// with OpenMP) of a serialized loop is allocated once, before the loops.
// In a loop that stays parallel, it stays in the iteration.
// CHECK-LABEL: func.func @iteration_buffer
// CHECK:         %[[ACC:.*]] = memref.alloca() : memref<8xf32>
// CHECK-NEXT:    scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NOT:       memref.alloca
// CHECK:           memref.store %{{.*}}, %[[ACC]][%[[I]]]
// ZERO-LABEL: func.func @iteration_buffer
// ZERO:         scf.parallel
// ZERO-NEXT:      memref.alloca() : memref<8xf32>
func.func @iteration_buffer(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %acc = memref.alloca() : memref<8xf32>
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %acc[%i] : memref<8xf32>
    %w = memref.load %acc[%i] : memref<8xf32>
    memref.store %w, %x[%i] : memref<4xf32>
  }
  return
}

// -----

// Parallel in the fewest outer dimensions with 64 iterations together
// (2 x 4 x 16 = 128); the innermost one runs in each iteration.
// CHECK-LABEL: func.func @outer_dimensions
// CHECK:         scf.parallel (%[[A:.*]], %[[B:.*]], %[[C:.*]]) = (%c0, %c0, %c0) to (%c2, %c4, %c16) step (%c1, %c1, %c1) {
// CHECK-NEXT:      scf.for %[[D:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:        memref.load %{{.*}}[%[[A]], %[[B]], %[[C]], %[[D]]]
func.func @outer_dimensions(%x: memref<2x4x16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%a, %b, %c, %d) = (%c0, %c0, %c0, %c0) to (%c2, %c4, %c16, %c64) step (%c1, %c1, %c1, %c1) {
    %v = memref.load %x[%a, %b, %c, %d] : memref<2x4x16x64xf32>
    %r = arith.mulf %v, %v : f32
    memref.store %r, %x[%a, %b, %c, %d] : memref<2x4x16x64xf32>
  }
  return
}
