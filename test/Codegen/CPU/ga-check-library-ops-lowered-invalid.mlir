// RUN: ga-opt %s -ga-check-library-ops-lowered -split-input-file -verify-diagnostics
// RUN: ga-opt %s -ga-lower-to-cpu -split-input-file -verify-diagnostics

// Each library op reaching the CPU lowering without --ga-lower-library-ops
// is refused at the op, with the pass that lowers it, by the check that
// --ga-lower-to-cpu runs first (rather than by an unreconciled
// unrealized_conversion_cast).

func.func @all_reduce(%g: memref<12xf32>) {
  // expected-error @+1 {{'ga.nccl_all_reduce' op is a library call that --ga-lower-to-cpu does not lower: run --ga-lower-library-ops first}}
  ga.nccl_all_reduce %g {datatype = 7 : i32, reduction = 0 : i32} : memref<12xf32>
  return
}

// -----

func.func @product(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op is a library call that --ga-lower-to-cpu does not lower}}
  ga.blas_matmul %a, %b, %c : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// -----

// Inside a loop too: the first one is reported.
func.func @nested(%g: memref<12xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{'ga.nccl_all_reduce' op is a library call}}
    ga.nccl_all_reduce %g {datatype = 7 : i32, reduction = 0 : i32} : memref<12xf32>
  }
  return
}
