// RUN: not ga-opt %s -ga-concatenate-products="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-concatenate-products))' -verify-diagnostics | FileCheck %s

// The pass has no options: an unknown one is refused by the option parser.
// OPTION: no such option bogus

// What the pass must leave alone (it reports nothing: these are not errors,
// only products it cannot prove it may concatenate).

// The second accumulator starts from a non-zero value: merging it would
// drop that value from the sum. An accumulator read by a product after the
// loop (not a sum) is not merged either.
// CHECK-LABEL: func.func @not_summed_from_zero
// CHECK:         scf.for {{.*}} -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK-NOT:     tensor.concat
#id = affine_map<(i, j) -> (i, j)>
func.func @not_summed_from_zero(%x: tensor<8x4xf32>, %w: tensor<4x16xf32>, %one: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %one, %c = %z) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
    %p = linalg.matmul {ga.library_product} ins(%x, %w : tensor<8x4xf32>, tensor<4x16xf32>) outs(%a : tensor<8x16xf32>) -> tensor<8x16xf32>
    %q = linalg.matmul {ga.library_product} ins(%x, %w : tensor<8x4xf32>, tensor<4x16xf32>) outs(%b : tensor<8x16xf32>) -> tensor<8x16xf32>
    %s = linalg.matmul {ga.library_product} ins(%x, %w : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
    scf.yield %p, %q, %s : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  }
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r#0, %r#1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %prod = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %r#2 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.mulf %u, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  return %prod, %sum : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A chain of products that add into one init, but of different kinds (the
// second reads its left operand transposed), or not marked as library
// products, or whose region does more than multiply-add (it reads its init
// twice): left alone.
// CHECK-LABEL: func.func @chains
// CHECK-NOT:     tensor.concat
#a = affine_map<(i, j, k) -> (i, k)>
#at = affine_map<(i, j, k) -> (k, i)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @chains(%x: tensor<8x8xf32>, %w: tensor<8x16xf32>, %init: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %p = linalg.matmul {ga.library_product} ins(%x, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  %q = linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%p : tensor<8x16xf32>) attrs = {ga.library_product} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %u0 = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%init : tensor<8x16xf32>) -> tensor<8x16xf32>
  %u1 = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%u0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %v0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%init : tensor<8x16xf32>) attrs = {ga.library_product} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %o : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %v1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%v0 : tensor<8x16xf32>) attrs = {ga.library_product} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %o : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %q, %u1, %v1 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Products that share a weight but do not start from zero, a chain of
// products each reading the previous one's result (a recurrence), and
// products whose shared operand is the smaller one (concatenating the other
// would copy more than the library saves), and products whose other operands
// are the function's arguments (two projections of one input, x Wq and x Wk:
// concatenating would copy the parameters Wq and Wk on every call): left
// alone.
// CHECK-LABEL: func.func @rows
// CHECK-NOT:     tensor.concat
func.func @rows(%x0: tensor<4x8xf32>, %x1: tensor<4x8xf32>, %w: tensor<8x8xf32>, %init: tensor<4x8xf32>, %g: tensor<4x64xf32>, %v0: tensor<64x128xf32>, %v1: tensor<64x128xf32>, %xs: tensor<16x8xf32>, %wq: tensor<8x4xf32>, %wk: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x128xf32>, tensor<4x128xf32>, tensor<16x4xf32>, tensor<16x4xf32>) {
  %p0 = linalg.matmul {ga.library_product} ins(%x0, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p1 = linalg.matmul {ga.library_product} ins(%x1, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.matmul {ga.library_product} ins(%x0, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = linalg.matmul {ga.library_product} ins(%h1, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x128xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x128xf32>) -> tensor<4x128xf32>
  %d0 = linalg.matmul {ga.library_product} ins(%g, %v0 : tensor<4x64xf32>, tensor<64x128xf32>) outs(%z2 : tensor<4x128xf32>) -> tensor<4x128xf32>
  %d1 = linalg.matmul {ga.library_product} ins(%g, %v1 : tensor<4x64xf32>, tensor<64x128xf32>) outs(%z2 : tensor<4x128xf32>) -> tensor<4x128xf32>
  %e3 = tensor.empty() : tensor<16x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %q = linalg.matmul {ga.library_product} ins(%xs, %wq : tensor<16x8xf32>, tensor<8x4xf32>) outs(%z3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %k = linalg.matmul {ga.library_product} ins(%xs, %wk : tensor<16x8xf32>, tensor<8x4xf32>) outs(%z3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %p1, %p0, %h2, %d0, %d1, %q, %k : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x128xf32>, tensor<4x128xf32>, tensor<16x4xf32>, tensor<16x4xf32>
}

// -----

// A chain of products into one init whose operands include function
// arguments (parameters: dX = dQ Wq + dK Wk): concatenating would copy Wq
// and Wk on every call, so it is left alone.
// CHECK-LABEL: func.func @parameters
// CHECK-NOT:     tensor.concat
func.func @parameters(%dq: tensor<4x8xf32>, %dk: tensor<4x8xf32>, %wq: tensor<8x16xf32>, %wk: tensor<8x16xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %p = linalg.matmul {ga.library_product} ins(%dq, %wq : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = linalg.matmul {ga.library_product} ins(%dk, %wk : tensor<4x8xf32>, tensor<8x16xf32>) outs(%p : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %q : tensor<4x16xf32>
}
