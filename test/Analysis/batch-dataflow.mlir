// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -o /dev/null | FileCheck %s

// What solving the batch lattices with the data-flow framework buys. Each
// case is executed against the full-batch step by test/Integration/Rewrite
// (rotated-iter-args, scf-while, dead-branches, masked-mean-multi-result).

// Six iteration arguments rotated through an scf.for: the per-sample value
// moves one argument further per iteration, so the last one is per-sample
// only after six links. The solver iterates to the fixpoint (no cap), and the
// nested scf.if steered by the induction variable is per-sample too.
// CHECK-LABEL: @rotated: batch size 8, loops 1
// CHECK:         scf.for: batched(0), batched(0), batched(0), batched(0), batched(0), batched(0)
// CHECK-NEXT:      iter_arg #0: batched(0)
// CHECK-NEXT:      iter_arg #1: batched(0)
// CHECK-NEXT:      iter_arg #2: batched(0)
// CHECK-NEXT:      iter_arg #3: batched(0)
// CHECK-NEXT:      iter_arg #4: batched(0)
// CHECK-NEXT:      iter_arg #5: batched(0)
// CHECK-NEXT:      linalg.matmul: batched(0)
// CHECK-NEXT:      arith.cmpi: uniform
// CHECK-NEXT:      scf.if: batched(0)
// CHECK-NEXT:        linalg.generic: batched(0)
// CHECK-NEXT:        linalg.generic: batched(0)
// CHECK:         linalg.matmul: reduced(add) [loop 1]
#id = affine_map<(b, j) -> (b, j)>
func.func @rotated(%w: tensor<8x4xf32>, %v: tensor<4x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r:6 = scf.for %i = %c0 to %c7 step %c1 iter_args(%a0 = %x, %a1 = %w, %a2 = %w, %a3 = %w, %a4 = %w, %a5 = %w)
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %m = linalg.matmul ins(%a0, %v : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %early = arith.cmpi ult, %i, %c3 : index
    %n = scf.if %early -> tensor<8x4xf32> {
      %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %a5 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %s = arith.addf %p, %q : f32
        linalg.yield %s : f32
      } -> tensor<8x4xf32>
      scf.yield %t : tensor<8x4xf32>
    } else {
      %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a5 : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%p: f32, %o: f32):
        %r = math.tanh %p : f32
        linalg.yield %r : f32
      } -> tensor<8x4xf32>
      scf.yield %t : tensor<8x4xf32>
    }
    scf.yield %n, %a0, %a1, %a2, %a3, %a4 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
  %ew = tensor.empty() : tensor<4x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dv = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%r#4, %r#0 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%zw : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %dv, %r#5 : tensor<4x4xf32>, tensor<8x4xf32>
}

// -----

// scf.while: the before region's arguments join the initial values and what
// the after region yields; scf.condition forwards them to the after region
// and the results. The counter stays uniform, the activation per-sample.
// CHECK-LABEL: @while: batch size 10, loops 1
// CHECK:         scf.while: uniform, batched(0)
// CHECK-NEXT:      before arg #0: uniform
// CHECK-NEXT:      before arg #1: batched(0)
// CHECK-NEXT:      arith.cmpi: uniform
// CHECK-NEXT:      after arg #0: uniform
// CHECK-NEXT:      after arg #1: batched(0)
// CHECK-NEXT:      linalg.matmul: batched(0)
// CHECK-NEXT:      arith.addi: uniform
// CHECK:         linalg.reduce: reduced(add) [loop 1]
func.func @while(%w: tensor<4x4xf32>, %x: tensor<10x4xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<10x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<10x4xf32>) -> tensor<10x4xf32>
  %r:2 = scf.while (%k = %c0, %a = %x) : (index, tensor<10x4xf32>) -> (index, tensor<10x4xf32>) {
    %more = arith.cmpi ult, %k, %c3 : index
    scf.condition(%more) %k, %a : index, tensor<10x4xf32>
  } do {
  ^bb0(%kk: index, %b: tensor<10x4xf32>):
    %m = linalg.matmul ins(%b, %w : tensor<10x4xf32>, tensor<4x4xf32>) outs(%z : tensor<10x4xf32>) -> tensor<10x4xf32>
    %next = arith.addi %kk, %c1 : index
    scf.yield %next, %m : index, tensor<10x4xf32>
  }
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%r#1 : tensor<10x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  return %s : tensor<f32>
}

// -----

// Branches on constant conditions: dead-code analysis proves the other
// branch dead, so it is not analysed (it would be refused: a read of one
// sample and a reduction over the batch inside a region).
// CHECK-LABEL: @dead_branches: batch size 8, loops 1
// CHECK:         scf.if: batched(0)
// CHECK-NEXT:      linalg.exp: batched(0)
// CHECK-NEXT:      dead region #1
// CHECK:         scf.if: uniform
// CHECK:         linalg.reduce: reduced(add) [loop 1]
// CHECK-NEXT:    linalg.mul: derived [after loop 1]
func.func @dead_branches(%w: tensor<4x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %false = arith.constant false
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %a = scf.if %true -> tensor<8x4xf32> {
    %t = linalg.exp ins(%h : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %t : tensor<8x4xf32>
  } else {
    %f = tensor.extract %h[%c0, %c0] : tensor<8x4xf32>
    %t = linalg.fill ins(%f : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %t : tensor<8x4xf32>
  }
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %scale = scf.if %false -> tensor<f32> {
    %r = linalg.reduce { arith.addf } ins(%h : tensor<8x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    scf.yield %r : tensor<f32>
  } else {
    %half = arith.constant dense<0.5> : tensor<f32>
    scf.yield %half : tensor<f32>
  }
  %s = linalg.reduce { arith.addf } ins(%a : tensor<8x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  %loss = linalg.mul ins(%s, %scale : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// One multi-result reduction, two classes: each result's class is the class
// of the value its payload yields, so the token count is a data-only
// statistic (an earlier loop) while the masked sum depends on parameters.
// CHECK-LABEL: @count_and_sum: batch size 8, loops 2
// CHECK:         linalg.generic: reduced(add), reduced(add) data [loop 1]
// CHECK:         linalg.generic: batched(0)
// CHECK:         linalg.generic: reduced(add) [loop 2]
// CHECK:         linalg.div: derived [after loop 1]
func.func @count_and_sum(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %m: tensor<8xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> ()>, affine_map<(b, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %m, %w : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %k: f32, %b: f32, %o: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %k : f32
    %s1 = arith.addf %q, %o : f32
    %s2 = arith.addf %k, %c : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  // Per-sample weights m / count, then the gradient sum_b x[b, j] m[b] / count.
  %e8 = tensor.empty() : tensor<8xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>, affine_map<(b) -> (b)>], iterator_types = ["parallel"]} ins(%m, %r#1 : tensor<8xf32>, tensor<f32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%k: f32, %n: f32, %o: f32):
    %d = arith.divf %k, %n : f32
    %dw = arith.mulf %d, %zero : f32
    %s = arith.addf %d, %dw : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x, %scaled, %w : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %s : f32
    %q = arith.mulf %p, %b : f32
    %acc = arith.addf %q, %o : f32
    linalg.yield %acc : f32
  } -> tensor<4xf32>
  %loss = linalg.div ins(%r#0, %r#1 : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss, %g : tensor<f32>, tensor<4xf32>
}

// -----

// Each transfer function is applied once per op on straight-line code: the
// verdicts (per-op information, diagnostics) are what the solver's visits
// found, not a second application after solving (which made this 10).
// CHECK-LABEL: @transfers_once: batch size 8, loops 1, transfers 5{{$}}
func.func @transfers_once(%x: tensor<8x3xf32> {ga.batch = 0 : i64}, %w: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %a = arith.mulf %x, %w : tensor<8x3xf32>
  %b = math.tanh %a : tensor<8x3xf32>
  %c = arith.addf %b, %w : tensor<8x3xf32>
  %d = tensor.cast %c : tensor<8x3xf32> to tensor<?x3xf32>
  %e = tensor.cast %d : tensor<?x3xf32> to tensor<8x3xf32>
  return %e : tensor<8x3xf32>
}
