// RUN: ga-opt %s -ga-vectorize-linalg="vector-width=100" -verify-diagnostics
// RUN: not ga-opt %s -ga-vectorize-linalg="vector-width=32" 2>&1 | FileCheck %s

// A vector width that is no vector register's: refused, at the function.
// CHECK: error: ga-vectorize-linalg: vector-width must be 0 (off) or a power of two of at least 64 bits, got 32

// expected-error @+1 {{ga-vectorize-linalg: vector-width must be 0 (off) or a power of two of at least 64 bits, got 100}}
func.func @f(%x: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%x : memref<64xf32>) {
  ^bb0(%o: f32):
    %n = arith.negf %o : f32
    linalg.yield %n : f32
  }
  return
}
