// RUN: ga-opt %s --split-input-file --ga-rematerialize | FileCheck %s
// RUN: ga-opt %s --split-input-file --ga-rematerialize="recompute=none" | FileCheck %s --check-prefix=NONE
// RUN: ga-opt %s --split-input-file --ga-rematerialize="values=1" | FileCheck %s --check-prefix=ONLY
// RUN: ga-opt %s --split-input-file --ga-rematerialize="recompute=products" | FileCheck %s --check-prefix=PRODUCTS

#id = affine_map<(d0) -> (d0)>

// A tanh read by the forward (%y) and the backward (%g): the backward gets
// its own copy of the tanh, from the same operand, right before it; then
// the square that reads it is shared as well, and is copied in turn (the
// chain from its checkpoint %h).
// CHECK-LABEL: func.func @chain
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8xf32>)
// CHECK:           math.tanh
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<8xf32>)
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8xf32>)
// CHECK:         %[[T2:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8xf32>)
// CHECK:           math.tanh
// CHECK:         %[[S2:.*]] = linalg.generic {{.*}} ins(%[[T2]] : tensor<8xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[S2]], %arg1 : tensor<8xf32>, tensor<8xf32>)
// CHECK:         return %[[Y]], %[[G]]
// NONE-LABEL: func.func @chain
// NONE-COUNT-4: linalg.generic
// NONE-NOT:     linalg.generic
// NONE:         return
// Only the square (position 1) is a candidate: it is copied, the tanh is
// not.
// ONLY-LABEL: func.func @chain
// ONLY-COUNT-1: math.tanh
// ONLY-NOT:     math.tanh
// ONLY-COUNT-2: arith.mulf %{{.*}}, %{{.*}} : f32
// ONLY:         return
func.func @chain(%h: tensor<8xf32>, %dy: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s, %dy : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %b, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %y, %g : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A value that a reduction reads is kept: a copy fused into a reduction
// would not be an element-wise loop any more. So is one that a matrix
// product or the function's return reads.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-1: math.exp
// CHECK-NOT:     math.exp
// CHECK-COUNT-1: math.tanh
// CHECK-NOT:     math.tanh
func.func @kept(%x: tensor<4x4xf32>, %v: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%z : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.exp %a : f32
    linalg.yield %q : f32
  } -> tensor<4x4xf32>
  %sum = linalg.generic {indexing_maps = [#map2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<4x4xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %o : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %neg = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.negf %a : f32
    linalg.yield %q : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<4xf32>) outs(%r0 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.tanh %a : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%r0 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.negf %a : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  return %sum, %neg, %p, %t : tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Inside a micro-batch loop: the copy goes right before its user, in the
// loop body.
// CHECK-LABEL: func.func @in_loop
// CHECK:         linalg.generic
// CHECK:           math.tanh
// CHECK:         scf.for
// CHECK:           linalg.generic
// CHECK:             math.tanh
// CHECK:           linalg.generic
// CHECK:             arith.mulf
func.func @in_loop(%h: tensor<8xf32>, %acc: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %l = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %acc) -> tensor<8xf32> {
    %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%t, %s : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<8xf32>
    scf.yield %m : tensor<8xf32>
  }
  return %y, %l : tensor<8xf32>, tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>

// recompute=products: the product %h is a checkpoint; the tanh %a (and its
// init) that the backward reads after the loss (the first value the block
// returns, which ends the forward) is computed again from %h, once, right
// before the first op of the backward that reads it; the forward keeps the
// original (read by the element-wise %y, which fusion may absorb it into as
// before: an element-wise op whose only remaining user would be a reduction
// stays a checkpoint, see ga-rematerialize-invalid.mlir).
// PRODUCTS-LABEL: func.func @products
// PRODUCTS:         %[[H:.*]] = linalg.matmul
// PRODUCTS:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xf32>)
// PRODUCTS:           math.tanh
// PRODUCTS:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4x8xf32>)
// PRODUCTS:         %[[L:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<4x8xf32>)
// PRODUCTS:         tensor.empty() : tensor<4x8xf32>
// PRODUCTS-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// PRODUCTS-NEXT:    %[[A2:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xf32>) outs(%[[E]]
// PRODUCTS:           math.tanh
// PRODUCTS:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[A2]], %[[A2]] : tensor<4x8xf32>, tensor<4x8xf32>)
// PRODUCTS:         %[[G2:.*]] = linalg.generic {{.*}} ins(%[[A2]], %[[G]] : tensor<4x8xf32>, tensor<4x8xf32>)
// PRODUCTS-NOT:     math.tanh
// PRODUCTS:         return %[[L]], %[[G2]]
func.func @products(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<f32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>)
      outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = arith.mulf %p, %p : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  %s = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%c0 : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #sum], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<4x8xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %g2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %g : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.subf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %loss, %g2 : tensor<f32>, tensor<4x8xf32>
}
