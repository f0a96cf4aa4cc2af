// RUN: ga-opt %s --ga-rematerialize="recompute=everything" -verify-diagnostics
// RUN: not ga-opt %s --ga-rematerialize="values=3" 2>&1 | FileCheck %s --check-prefix=POS

// A policy the pass does not know, and a position of the explicit set that
// names no element-wise op.
// expected-error@+2 {{--ga-rematerialize: unknown recompute policy 'everything' (expected none, pointwise or products)}}
// POS: error: --ga-rematerialize: no element-wise op at position 3 of @policy (it has 0)
func.func @policy(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
