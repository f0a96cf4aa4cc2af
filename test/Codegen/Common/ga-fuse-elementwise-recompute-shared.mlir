// RUN: ga-opt %s -ga-fuse-elementwise="recompute-shared=1" -split-input-file | FileCheck %s
// RUN: ga-opt %s -ga-fuse-elementwise="recompute-shared=1 max-recompute-ops=1" -split-input-file | FileCheck %s --check-prefix=BOUND
// RUN: ga-opt %s -ga-fuse-elementwise -split-input-file | FileCheck %s --check-prefix=OFF


#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// A bias add read by ReLU and by ReLU's derivative: fused into both, so the
// add is computed in each of them and its own op disappears.
// CHECK-LABEL: func.func @bias_two_users
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:           %[[A:.*]] = arith.addf
// CHECK:           arith.maximumf %[[A]]
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%arg2, %arg0, %arg1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>)
// CHECK:           %[[B:.*]] = arith.addf
// CHECK:           arith.cmpf ogt, %[[B]]
// CHECK:           arith.select
// CHECK-NOT:     linalg.generic
// The bound (max-recompute-ops=1) still admits the single add.
// BOUND-LABEL: func.func @bias_two_users
// BOUND-COUNT-2: linalg.generic
// BOUND-NOT:     linalg.generic
// Without recompute-shared, upstream's single-use rule keeps all three.
// OFF-LABEL: func.func @bias_two_users
// OFF-COUNT-3: linalg.generic
func.func @bias_two_users(%z: tensor<4x8xf32>, %b: tensor<8xf32>, %g: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %c = arith.cmpf ogt, %y, %zero : f32
    %s = arith.select %c, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#bc = affine_map<(i, j) -> (i)>

// Softmax's exp(l - max), read by the row sum (a reduction) and by the
// division (which also reads the sum broadcast over the row): fused into
// both; the sum still feeds the division.
// CHECK-LABEL: func.func @exp_into_reduction
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction"]
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel"]
// CHECK-SAME:        ins(%arg0, %arg1, %[[SUM]]
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic
// BOUND-LABEL: func.func @exp_into_reduction
// BOUND-COUNT-3: linalg.generic
func.func @exp_into_reduction(%l: tensor<4x8xf32>, %max: tensor<4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    %x = math.exp %s : f32
    linalg.yield %x : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #bc], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>

// A matrix product takes no arithmetic into its operands (it would stop being
// a plain multiply-add, which the library lowerings need): the ReLU read by
// the product and by an element-wise op stays. The transpose read by two
// products moves data only and is fused into both (a transposed map).
// CHECK-LABEL: func.func @products
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK:           arith.maximumf
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[R]], %arg1 : tensor<4x8xf32>, tensor<8x8xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[R]], %arg1 : tensor<4x8xf32>, tensor<8x8xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[R]] : tensor<4x8xf32>)
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
func.func @products(%z: tensor<4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<8x8xf32>
  %wt = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%r, %wt : tensor<4x8xf32>, tensor<8x8xf32>) outs(%c : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%r, %wt : tensor<4x8xf32>, tensor<8x8xf32>) outs(%c : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.exp %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %p, %q, %x : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#bc = affine_map<(i, j) -> (i)>

// A row dot product (a contraction without M or N dimension, which no
// library call takes) absorbs arithmetic: the shifted logits are fused into
// it and into the element-wise user.
// CHECK-LABEL: func.func @row_dot
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction"]
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:         linalg.generic
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
func.func @row_dot(%l: tensor<4x8xf32>, %y: tensor<4x8xf32>, %m: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %dot = linalg.generic {indexing_maps = [#id, #id, #bc], iterator_types = ["parallel", "reduction"]}
      ins(%y, %s : tensor<4x8xf32>, tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %dot, %x : tensor<4xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Left alone: a producer that is also returned (a user that cannot absorb
// it), and a producer that reads its init.
// CHECK-LABEL: func.func @not_recomputed
// CHECK-COUNT-5: linalg.generic
func.func @not_recomputed(%a: tensor<4x8xf32>, %acc: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = math.tanh %x : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = math.exp %x : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = arith.addf %o, %x : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %w = math.exp %x : f32
    linalg.yield %w : f32
  } -> tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.log %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %t, %u, %v, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
