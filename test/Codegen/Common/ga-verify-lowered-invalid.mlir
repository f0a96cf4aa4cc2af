// RUN: ga-opt %s -ga-verify-lowered="allowed-dialects=llvm" -split-input-file -verify-diagnostics
// RUN: not ga-opt %s -ga-verify-lowered="allowed-dialects=llvm by='by the test'" -split-input-file 2>&1 | FileCheck %s

// The first op that is neither in an allowed dialect nor an allowed op is
// reported at its location, and the pass fails.
// CHECK: ga-verify-lowered-invalid.mlir:[[@LINE+5]]:8: error: 'arith.addf' was not lowered by the test
// CHECK: error: 'memref.alloc' was not lowered by the test

llvm.func @f(%x: f32) -> f32 {
  // expected-error @+1 {{'arith.addf' was not lowered by the pipeline}}
  %y = arith.addf %x, %x : f32
  llvm.return %y : f32
}

// -----

llvm.func @g() {
  // expected-error @+1 {{'memref.alloc' was not lowered by the pipeline}}
  %m = memref.alloc() : memref<4xf32>
  llvm.return
}

// -----

// An op without a location (a cast that a conversion made without one) is
// reported at the nearest op with one that it reads from or that reads it,
// so that the refusal still names a line.
llvm.func @h(%x: i64) -> i64 {
  %i = builtin.unrealized_conversion_cast %x : i64 to index loc(unknown)
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' was not lowered by the pipeline}}
  %j = builtin.unrealized_conversion_cast %i : index to i64
  llvm.return %j : i64
}
