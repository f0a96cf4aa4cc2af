// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -o /dev/null | FileCheck %s

// A gather from a captured per-sample tensor at the op's own batch loop (the
// nll_loss of torch-mlir) is read locally; the label index is data. Each
// result of the multi-result op has its own class: the weights of the kept
// labels do not depend on parameters.
// CHECK-LABEL: @gather: batch size 8, loops 1
// CHECK:         linalg.matmul: batched(0)
// CHECK:         linalg.generic: batched(0), batched(0) data [1 local gather]
// CHECK:         linalg.generic: reduced(add), reduced(add) data [loop 1]
func.func @gather(%w: tensor<4x5xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %y: tensor<8xi64> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x5xf32>) outs(%z : tensor<8x5xf32>) -> tensor<8x5xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %nll:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y : tensor<8xi64>) outs(%e8, %e8 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%l: i64, %o: f32, %o2: f32):
    %i = linalg.index 0 : index
    %li = arith.index_cast %l : i64 to index
    %v = tensor.extract %logits[%i, %li] : tensor<8x5xf32>
    %n = arith.negf %v : f32
    %keep = arith.cmpi ne, %l, %c0 : i64
    %k = arith.select %keep, %one, %zero : f32
    linalg.yield %n, %k : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%nll#0, %nll#1 : tensor<8xf32>, tensor<8xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %o2: f32):
    %r = arith.addf %a, %o : f32
    %r2 = arith.addf %b, %o2 : f32
    linalg.yield %r, %r2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %s#0, %s#1 : tensor<f32>, tensor<f32>
}

// -----

// A data-only count reduced together with a parameter-dependent sum feeds
// per-sample math: it gets an earlier loop by default (per result), and so
// does the whole multi-result reduction.
// CHECK-LABEL: @count_with_sum: batch size 8, loops 2
// CHECK:         linalg.generic: reduced(add), reduced(add) data [loop 1]
// CHECK:         linalg.generic: batched(0)
// CHECK:         linalg.reduce: reduced(add) [loop 2]
func.func @count_with_sum(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %m: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %m, %w : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %k: f32, %b: f32, %o: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s1 = arith.addf %p, %o : f32
    %s2 = arith.addf %k, %c : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  %e = tensor.empty() : tensor<8x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %w, %r#1 : tensor<8x4xf32>, tensor<4xf32>, tensor<f32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %n: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.divf %p, %n : f32
    linalg.yield %q : f32
  } -> tensor<8x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %dw = linalg.reduce { arith.addf } ins(%g : tensor<8x4xf32>) outs(%z4 : tensor<4xf32>) dimensions = [0]
  return %r#0, %dw : tensor<f32>, tensor<4xf32>
}

// -----

// The batch size inside regions: a per-sample scf.if (the size of a
// per-sample value is recorded in the region), a payload that only takes the
// size of a captured per-sample value, and an scf.if after the reduction
// whose region only takes the size (neither is per-sample).
// CHECK-LABEL: @batch_size_in_regions: batch size ?, loops 1
// CHECK:         scf.if: batched(0)
// CHECK-NEXT:      tensor.dim: uniform batch-size
// CHECK:         linalg.generic: reduced(add) [loop 1]
// CHECK:         linalg.generic: derived [after loop 1]
// CHECK:         scf.if: derived [after loop 1]
func.func @batch_size_in_regions(%w: tensor<4xf32>, %flag: i1, %x: tensor<?x4xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%b) : tensor<?x4xf32>
  %h = scf.if %flag -> tensor<?x4xf32> {
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %q = arith.divf %a, %nf : f32
      linalg.yield %q : f32
    } -> tensor<?x4xf32>
    scf.yield %r : tensor<?x4xf32>
  } else {
    scf.yield %x : tensor<?x4xf32>
  }
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%h, %w : tensor<?x4xf32>, tensor<4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %r = arith.divf %a, %nf : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %res = scf.if %flag -> tensor<f32> {
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %q = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f32>) outs(%es : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.divf %a, %nf : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    scf.yield %q : tensor<f32>
  } else {
    scf.yield %s : tensor<f32>
  }
  return %mean, %res : tensor<f32>, tensor<f32>
}
