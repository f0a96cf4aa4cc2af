// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-concatenate-products))' | FileCheck %s

// The weight gradient of a recurrence unrolled over two steps: one
// accumulator per step, summed after the loop. Both become one accumulator,
// the second step's product adding into the first's; two products are fewer
// than the four worth a concatenation, so they stay two.
// CHECK-LABEL: func.func @weight_gradient
// CHECK:         %[[ZERO:.*]] = linalg.fill
// CHECK:         %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (tensor<8x16xf32>)
// CHECK:           %[[P:.*]] = linalg.generic {{.*}} outs(%[[A]] : tensor<8x16xf32>) attrs =  {ga.library_product}
// CHECK:           %[[Q:.*]] = linalg.generic {{.*}} outs(%[[P]] : tensor<8x16xf32>) attrs =  {ga.library_product}
// CHECK:           scf.yield %[[Q]]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
#g = affine_map<(i, j, r) -> (r, i)>
#h = affine_map<(i, j, r) -> (r, j)>
#o = affine_map<(i, j, r) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @weight_gradient(%g: tensor<8x8xf32>, %h: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %z) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %g0 = tensor.extract_slice %g[0, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
    %h0 = tensor.extract_slice %h[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    %g1 = tensor.extract_slice %g[4, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
    %h1 = tensor.extract_slice %h[4, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    %p = linalg.generic {indexing_maps = [#g, #h, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g0, %h0 : tensor<4x8xf32>, tensor<4x16xf32>) outs(%a : tensor<8x16xf32>) attrs = {ga.library_product} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    %q = linalg.generic {indexing_maps = [#g, #h, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g1, %h1 : tensor<4x8xf32>, tensor<4x16xf32>) outs(%b : tensor<8x16xf32>) attrs = {ga.library_product} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    scf.yield %p, %q : tensor<8x16xf32>, tensor<8x16xf32>
  }
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0, %r#1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %sum : tensor<8x16xf32>
}

// -----

// The sum of the two accumulators was recomputed at each of its users
// (--ga-rematerialize, a tied weight's two gradients read by Adam's two
// moments): the copies are one sum, folded into the first, so the
// accumulators merge as without the copies and the step sums in the same
// order with and without recomputation.
// CHECK-LABEL: func.func @copied_sum
// CHECK:         %[[R:.*]] = scf.for {{.*}} -> (tensor<8x16xf32>)
// CHECK:           %[[P:.*]] = linalg.generic {{.*}} attrs =  {ga.library_product}
// CHECK:           linalg.generic {{.*}} outs(%[[P]] : tensor<8x16xf32>) attrs =  {ga.library_product}
// CHECK-NOT:     ga.recomputed
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[R]] :
// CHECK:         return %[[M]]
#g = affine_map<(i, j, r) -> (r, i)>
#h = affine_map<(i, j, r) -> (r, j)>
#o = affine_map<(i, j, r) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @copied_sum(%g: tensor<8x8xf32>, %h: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %z) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %p = linalg.generic {indexing_maps = [#g, #h, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g, %h : tensor<8x8xf32>, tensor<8x16xf32>) outs(%a : tensor<8x16xf32>) attrs = {ga.library_product} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    %q = linalg.generic {indexing_maps = [#g, #h, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g, %h : tensor<8x8xf32>, tensor<8x16xf32>) outs(%b : tensor<8x16xf32>) attrs = {ga.library_product} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    scf.yield %p, %q : tensor<8x16xf32>, tensor<8x16xf32>
  }
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0, %r#1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %copy = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#1, %r#0 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) attrs = {ga.recomputed} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %moment = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %copy : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %moment : tensor<8x16xf32>
}

// -----

// One accumulator read by two different sums (with the other accumulator
// and with an argument): not copies of one sum, so nothing is folded or
// merged (merging would add the other accumulator into the second sum).
// CHECK-LABEL: func.func @different_sums
// CHECK:         scf.for {{.*}} -> (tensor<8x16xf32>, tensor<8x16xf32>)
#g = affine_map<(i, j, r) -> (r, i)>
#h = affine_map<(i, j, r) -> (r, j)>
#o = affine_map<(i, j, r) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @different_sums(%g: tensor<8x8xf32>, %h: tensor<8x16xf32>, %t: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %z) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %p = linalg.generic {indexing_maps = [#g, #h, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g, %h : tensor<8x8xf32>, tensor<8x16xf32>) outs(%a : tensor<8x16xf32>) attrs = {ga.library_product} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    %q = linalg.generic {indexing_maps = [#g, #h, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%g, %h : tensor<8x8xf32>, tensor<8x16xf32>) outs(%b : tensor<8x16xf32>) attrs = {ga.library_product} {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    scf.yield %p, %q : tensor<8x16xf32>, tensor<8x16xf32>
  }
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0, %r#1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %other = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0, %t : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %sum, %other : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Four accumulators in one tree of sums with another value (a weight decay
// term): the tree keeps that term and the first accumulator's result, which
// carries the three steps. The accumulator that starts from the function's
// argument keeps its init (it is first in the body); the products are named
// matmuls.
// CHECK-LABEL: func.func @tree
// CHECK:         %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %arg2) -> (tensor<8x16xf32>)
// CHECK:           %[[X:.*]] = tensor.extract_slice %arg0
// CHECK:           %[[W0:.*]] = tensor.extract_slice %arg1[0, 0]
// CHECK:           %[[W1:.*]] = tensor.extract_slice %arg1[4, 0]
// CHECK:           tensor.concat dim(1) %[[X]], %[[X]], %[[X]], %[[X]] : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x16xf32>
// CHECK:           tensor.concat dim(0) %[[W0]], %[[W1]], %[[W0]], %[[W1]] : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<16x16xf32>
// CHECK:           linalg.matmul {ga.library_product} ins({{.*}} : tensor<8x16xf32>, tensor<16x16xf32>) outs(%[[A]] : tensor<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %arg3 : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK-NOT:     linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @tree(%xs: tensor<8x8xf32>, %ws: tensor<8x16xf32>, %init: tensor<8x16xf32>, %decay: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init, %b = %z, %c = %z, %d = %z) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
    %x = tensor.extract_slice %xs[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
    %w0 = tensor.extract_slice %ws[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    %w1 = tensor.extract_slice %ws[4, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    %p = linalg.matmul {ga.library_product} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%a : tensor<8x16xf32>) -> tensor<8x16xf32>
    %q = linalg.matmul {ga.library_product} ins(%x, %w1 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%b : tensor<8x16xf32>) -> tensor<8x16xf32>
    %s = linalg.matmul {ga.library_product} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
    %v = linalg.matmul {ga.library_product} ins(%x, %w1 : tensor<8x4xf32>, tensor<4x16xf32>) outs(%d : tensor<8x16xf32>) -> tensor<8x16xf32>
    scf.yield %p, %q, %s, %v : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  }
  %s00 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#3, %r#1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %s0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#2, %s00 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s0, %r#0 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s1, %decay : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  return %s2 : tensor<8x16xf32>
}

// -----

// Independent products from zero that share a weight (the input projections
// of a recurrence's steps, each reading its step's slice of the input): one
// product over the concatenated rows, placed before the first use of any of
// them (the slice of the second step, which came after that use, is moved
// there); each result is its rows of it. The product whose input needs the
// first product's result (a recurrence) is left alone.
// CHECK-LABEL: func.func @shared_weight
// CHECK:         %[[X0:.*]] = tensor.extract_slice %arg0[0, 0] [4, 8] [1, 1]
// CHECK:         %[[X1:.*]] = tensor.extract_slice %arg0[4, 0] [4, 8] [1, 1]
// CHECK:         %[[X:.*]] = tensor.concat dim(0) %[[X0]], %[[X1]], %[[X0]], %[[X1]] : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
// CHECK:         %[[Z:.*]] = linalg.fill {{.*}} -> tensor<16x16xf32>
// CHECK:         %[[P:.*]] = linalg.matmul {ga.library_product} ins(%[[X]], %arg1 : tensor<16x8xf32>, tensor<8x16xf32>) outs(%[[Z]] : tensor<16x16xf32>)
// CHECK:         %[[P0:.*]] = tensor.extract_slice %[[P]][0, 0] [4, 16] [1, 1]
// CHECK:         %[[P1:.*]] = tensor.extract_slice %[[P]][4, 0] [4, 16] [1, 1]
// CHECK:         %[[T:.*]] = tensor.extract_slice %[[P0]][0, 0] [4, 8] [1, 1]
// CHECK:         linalg.matmul {ga.library_product} ins(%[[T]], %arg1 : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK:         return %[[P0]], %[[P1]]
func.func @shared_weight(%x: tensor<8x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %x0 = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %p0 = linalg.matmul {ga.library_product} ins(%x0, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = tensor.extract_slice %p0[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[4, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %p1 = linalg.matmul {ga.library_product} ins(%x1, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p3 = linalg.matmul {ga.library_product} ins(%x0, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p4 = linalg.matmul {ga.library_product} ins(%x1, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p2 = linalg.matmul {ga.library_product} ins(%t, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %p0, %p1, %p2, %p3, %p4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
