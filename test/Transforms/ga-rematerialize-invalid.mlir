// RUN: ga-opt %s --ga-rematerialize="recompute=everything" -verify-diagnostics
// RUN: not ga-opt %s --ga-rematerialize="values=3" 2>&1 | FileCheck %s --check-prefix=POS
// RUN: ga-opt %s --ga-rematerialize="recompute=products" | FileCheck %s --check-prefix=KEPT

// A policy the pass does not know, and a position of the explicit set that
// names no element-wise op.
// expected-error@+2 {{--ga-rematerialize: unknown recompute policy 'everything' (expected none, pointwise, attention, products, layers)}}
// POS: error: --ga-rematerialize: no element-wise op at position 3 of @policy (it has 0)
func.func @policy(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// recompute=products leaves alone, silently, a forward value whose copy
// would change what the CPU pipeline fuses: the tanh's only forward user is
// a reduction, which would absorb it once the backward read a copy (a
// different loop, whose approximate math may round otherwise). It stays a
// checkpoint: one tanh.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>
// KEPT-LABEL: func.func @fused_into_reduction
// KEPT-COUNT-1: math.tanh
// KEPT-NOT:     math.tanh
// expected-error@+1 {{--ga-rematerialize: unknown recompute policy 'everything' (expected none, pointwise, attention, products, layers)}}
func.func @fused_into_reduction(%h: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %s = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%c0 : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #sum], iterator_types = ["reduction", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %g = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %loss, %g : tensor<f32>, tensor<4x8xf32>
}
