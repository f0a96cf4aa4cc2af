// RUN: ga-opt %s -ga-split-row-reductions="vector-width=96" -verify-diagnostics

// A vector width that is no vector register's: refused, at the function.

// expected-error @+1 {{ga-split-row-reductions: vector-width must be 0 (off) or a power of two of at least 64 bits, got 96}}
func.func @f(%x: memref<4x32xf32>, %s: memref<4xf32>) {
  linalg.reduce ins(%x : memref<4x32xf32>) outs(%s : memref<4xf32>) dimensions = [1]
    (%v: f32, %o: f32) {
      %r = arith.addf %v, %o : f32
      linalg.yield %r : f32
    }
  return
}
