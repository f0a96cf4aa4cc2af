// RUN: ga-opt %s -ga-serialize-small-parallel-loops="min-work=1000000" -split-input-file -verify-diagnostics | FileCheck %s

// Nothing here is an error, and nothing is reported: a loop the rewrite
// cannot take (scf.parallel -> scf.for does not carry the results of a
// reduction) stays parallel, however small, with no diagnostic.

// CHECK-LABEL: func.func @reduction
// CHECK:         scf.parallel {{.*}} init
func.func @reduction(%x: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.parallel (%i) = (%c0) to (%c16) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<16xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %s : f32
}

// -----

// An empty range is no work: serialized (it runs no iteration either way).
// CHECK-LABEL: func.func @empty
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for %{{.*}} = %c8 to %c4 step %c1
func.func @empty(%x: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c8) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<16xf32>
    memref.store %v, %x[%i] : memref<16xf32>
  }
  return
}
