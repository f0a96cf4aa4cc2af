// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -verify-diagnostics -o /dev/null

// The sixth link of a rotated chain of iteration arguments reaches an op that
// must be refused: only a fixpoint without an iteration cap sees it.
func.func @rotated_refused(%w: tensor<8x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %r:6 = scf.for %i = %c0 to %c7 step %c1 iter_args(%a0 = %x, %a1 = %w, %a2 = %w, %a3 = %w, %a4 = %w, %a5 = %w)
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    // expected-error @+1 {{reading single elements of a per-sample value picks samples}}
    %f = tensor.extract %a5[%c0, %c0] : tensor<8x4xf32>
    %t = linalg.fill ins(%f : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %a0, %a0, %a1, %a2, %a3, %a4 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
  return %r#5 : tensor<8x4xf32>
}

// -----

// An scf.while whose loop-carried value is per-sample along dimension 0 on
// entry and along dimension 1 once the body transposed it.
func.func @while_disagrees(%c: i1, %x: tensor<8x8xf32> {ga.batch = 0 : i64}) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{result #0 is per-sample along different dimensions in different places}}
  %r = scf.while (%a = %x) : (tensor<8x8xf32>) -> tensor<8x8xf32> {
    scf.condition(%c) %a : tensor<8x8xf32>
  } do {
  ^bb0(%b: tensor<8x8xf32>):
    %t = linalg.transpose ins(%b : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) permutation = [1, 0]
    scf.yield %t : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

// The live branch of a constant condition is analysed like any other code:
// its refusal stands (the dead branch is fine).
func.func @live_branch_refused(%x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %e = tensor.empty() : tensor<8x4xf32>
  %r = scf.if %false -> tensor<8x4xf32> {
    scf.yield %x : tensor<8x4xf32>
  } else {
    // expected-error @+1 {{reading single elements of a per-sample value picks samples}}
    %f = tensor.extract %x[%c0, %c0] : tensor<8x4xf32>
    %t = linalg.fill ins(%f : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %t : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}

// -----

// One multi-result reduction, two classes: the data-only count may feed
// per-sample math (an earlier loop), the parameter-dependent sum may not.
func.func @sum_couples(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %m: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-note @+1 {{the value is reduced over the batch here}}
  %r:2 = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> ()>, affine_map<(b, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %m, %w : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %k: f32, %b: f32, %o: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s1 = arith.addf %p, %o : f32
    %s2 = arith.addf %k, %c : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  %e8 = tensor.empty() : tensor<8xf32>
  %byCount = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>, affine_map<(b) -> (b)>], iterator_types = ["parallel"]} ins(%m, %r#1 : tensor<8xf32>, tensor<f32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%k: f32, %n: f32, %o: f32):
    %d = arith.divf %k, %n : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  // expected-error @+2 {{batch coupling: per-sample computation uses a value reduced over the whole batch}}
  // expected-note @+1 {{it depends on parameters: use recompute-statistics}}
  %bySum = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>, affine_map<(b) -> (b)>], iterator_types = ["parallel"]} ins(%byCount, %r#0 : tensor<8xf32>, tensor<f32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%k: f32, %n: f32, %o: f32):
    %d = arith.divf %k, %n : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  return %bySum : tensor<8xf32>
}

// -----

// A refusal is decided on the converged lattice, not on a transient state
// (Integration/Rewrite/slice-after-loop.test is accepted): the value turns
// per-sample only through the loop, and the slice keeps half of the batch
// extent of the loop's result, which selects samples.
func.func @slice_after_loop_selects(%x: tensor<3x?xf32> {ga.batch = 1 : i64}, %w: tensor<3xf32>) -> tensor<2x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c1 : tensor<3x?xf32>
  %e = tensor.empty(%n) : tensor<3x?xf32>
  %init = linalg.broadcast ins(%w : tensor<3xf32>) outs(%e : tensor<3x?xf32>) dimensions = [1]
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %init) -> (tensor<3x?xf32>) {
    %s = arith.addf %a, %x : tensor<3x?xf32>
    scf.yield %s : tensor<3x?xf32>
  }
  %nr = tensor.dim %r, %c1 : tensor<3x?xf32>
  %half = arith.divui %nr, %c2 : index
  // expected-error @+1 {{slicing along the batch dimension selects samples}}
  %sl = tensor.extract_slice %r[1, 0] [2, %half] [1, 1] : tensor<3x?xf32> to tensor<2x?xf32>
  return %sl : tensor<2x?xf32>
}

// -----

// The same slice sized by the batch extent but starting at another sample.
func.func @slice_after_loop_offset(%x: tensor<3x?xf32> {ga.batch = 1 : i64}, %w: tensor<3xf32>) -> tensor<2x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c1 : tensor<3x?xf32>
  %e = tensor.empty(%n) : tensor<3x?xf32>
  %init = linalg.broadcast ins(%w : tensor<3xf32>) outs(%e : tensor<3x?xf32>) dimensions = [1]
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %init) -> (tensor<3x?xf32>) {
    %s = arith.addf %a, %x : tensor<3x?xf32>
    scf.yield %s : tensor<3x?xf32>
  }
  %nr = tensor.dim %r, %c1 : tensor<3x?xf32>
  %m = arith.subi %nr, %c1 : index
  // expected-error @+1 {{slicing along the batch dimension selects samples}}
  %sl = tensor.extract_slice %r[1, 1] [2, %m] [1, 1] : tensor<3x?xf32> to tensor<2x?xf32>
  return %sl : tensor<2x?xf32>
}
