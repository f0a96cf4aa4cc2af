// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -o /dev/null | FileCheck %s

// Named linalg ops: the batch loop is read off the indexing maps.
// CHECK-LABEL: @named_ops: batch size 8, loops 1
// CHECK:        arg #0: uniform
// CHECK:        arg #1: batched(0) data
// CHECK:        linalg.matmul: batched(0)
// CHECK:        linalg.transpose: batched(1)
// CHECK:        linalg.add: batched(0)
// CHECK:        linalg.matmul: reduced(add) [loop 1]
// CHECK:        linalg.transpose: batched(1) data
// CHECK:        linalg.matmul: reduced(add) [loop 1]
// CHECK:        linalg.matvec: batched(0) data
// CHECK:        linalg.vecmat: reduced(add) data [loop 1]
// CHECK:        linalg.reduce: batched(0) data
// CHECK:        linalg.reduce: reduced(maximumf) data [loop 1]
// CHECK:        linalg.exp: batched(0) data
func.func @named_ops(%w: tensor<4x3xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e83 = tensor.empty() : tensor<8x3xf32>
  %z83 = linalg.fill ins(%c0 : f32) outs(%e83 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%z83 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e38 = tensor.empty() : tensor<3x8xf32>
  %ht = linalg.transpose ins(%h : tensor<8x3xf32>) outs(%e38 : tensor<3x8xf32>) permutation = [1, 0]
  %bias = tensor.empty() : tensor<3xf32>
  %bb = linalg.broadcast ins(%bias : tensor<3xf32>) outs(%e83 : tensor<8x3xf32>) dimensions = [0]
  %a = linalg.add ins(%h, %bb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e83 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%c0 : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  // dW = x^T a through the transposing indexing maps of linalg.matmul.
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : tensor<8x4xf32>, tensor<8x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  // The same through an explicit transpose of the per-sample operand.
  %e48 = tensor.empty() : tensor<4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e48 : tensor<4x8xf32>) permutation = [1, 0]
  %dw2 = linalg.matmul ins(%xt, %a : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %v = tensor.empty() : tensor<4xf32>
  %mv = linalg.matvec ins(%x, %v : tensor<8x4xf32>, tensor<4xf32>) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %vm = linalg.vecmat ins(%mv, %x : tensor<8xf32>, tensor<8x4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.reduce { arith.addf } ins(%x : tensor<8x4xf32>) outs(%e8 : tensor<8xf32>) dimensions = [1]
  %cols = linalg.reduce { arith.maximumf } ins(%x : tensor<8x4xf32>) outs(%e4 : tensor<4xf32>) dimensions = [0]
  %ex = linalg.exp ins(%x : tensor<8x4xf32>) outs(%x : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %dw, %dw2, %vm, %cols : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Batch in a non-leading dimension, batch_matmul, generic reductions of every
// combiner and a multi-result (argmax-like) reduction.
// CHECK-LABEL: @generic_ops: batch size 6, loops 1
// CHECK:        arg #0: uniform
// CHECK:        arg #1: batched(1) data
// CHECK:        arg #2: batched(0) data
// CHECK:        linalg.batch_matmul: batched(1)
// CHECK:        linalg.generic: reduced(add) [loop 1]
// CHECK:        linalg.generic: reduced(maxnumf) [loop 1]
// CHECK:        linalg.generic: reduced(add) data [loop 1]
// CHECK:        linalg.generic: reduced(custom), reduced(custom) [loop 1]
// CHECK:        linalg.generic: derived [after loop 1]
func.func @generic_ops(%w: tensor<2x3x3xf32>, %x: tensor<2x6x3xf32> {ga.batch = 1 : i64},
                       %n: tensor<6xi32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i64>, tensor<f32>) {
  %e = tensor.empty() : tensor<2x6x3xf32>
  %y = linalg.batch_matmul ins(%x, %w : tensor<2x6x3xf32>, tensor<2x3x3xf32>) outs(%e : tensor<2x6x3xf32>) -> tensor<2x6x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(g, b, f) -> (g, b, f)>, affine_map<(g, b, f) -> ()>],
                         iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x6x3xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %max = linalg.generic {indexing_maps = [affine_map<(g, b, f) -> (g, b, f)>, affine_map<(g, b, f) -> ()>],
                         iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x6x3xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maxnumf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %i0 = tensor.empty() : tensor<i32>
  %count = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>], iterator_types = ["reduction"]}
      ins(%n : tensor<6xi32>) outs(%i0 : tensor<i32>) {
  ^bb0(%in: i32, %acc: i32):
    %r = arith.addi %acc, %in : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  // Max over the batch and its position: the batch is the outermost
  // reduction loop, so order-preserving splitting is exact.
  %v0 = tensor.empty() : tensor<f32>
  %p0 = tensor.empty() : tensor<i64>
  %best:2 = linalg.generic {indexing_maps = [affine_map<(b, g) -> (g, b, 0)>, affine_map<(b, g) -> ()>, affine_map<(b, g) -> ()>],
                            iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x6x3xf32>) outs(%v0, %p0 : tensor<f32>, tensor<i64>) {
  ^bb0(%in: f32, %bv: f32, %bp: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %gt = arith.cmpf ogt, %in, %bv : f32
    %nv = arith.select %gt, %in, %bv : f32
    %np = arith.select %gt, %ii, %bp : i64
    linalg.yield %nv, %np : f32, i64
  } -> (tensor<f32>, tensor<i64>)
  %mean = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%s0 : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.constant 0.0277777780 : f32
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %sum, %max, %count, %best#0, %best#1, %mean : tensor<f32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i64>, tensor<f32>
}

// -----

// Tensor ops: reshapes carry the batch with a factor; tensor.dim of the batch
// dimension is the batch size.
// CHECK-LABEL: @tensor_ops: batch size ?, loops 1
// CHECK:        arg #0: batched(0) data
// CHECK:        tensor.collapse_shape: batched(0 x5) data
// CHECK:        tensor.dim: uniform batch-size
// CHECK:        tensor.expand_shape: batched(0) data
// CHECK:        tensor.dim: uniform batch-size
// CHECK:        tensor.cast: batched(0) data
// CHECK:        tensor.extract_slice: batched(0) data
// CHECK:        tensor.insert_slice: batched(0) data
// CHECK:        tensor.concat: batched(0) data
// CHECK:        tensor.pad: batched(0) data
// CHECK:        arith.mulf: batched(0) data
// CHECK:        math.exp: batched(0) data
// CHECK:        tensor.extract_slice: batched(0) data
func.func @tensor_ops(%x: tensor<?x5x4xf32> {ga.batch = 0 : i64}) -> (tensor<?x5x4xf32>, index, tensor<?x8xf32>, tensor<?x5x6xf32>) {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x5x4xf32> into tensor<?x4xf32>
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x5x4xf32>
  %back = tensor.expand_shape %flat [[0, 1], [2]] output_shape [%b, 5, 4] : tensor<?x4xf32> into tensor<?x5x4xf32>
  %b2 = tensor.dim %back, %c0 : tensor<?x5x4xf32>
  %cast = tensor.cast %back : tensor<?x5x4xf32> to tensor<?x5x4xf32>
  %s = tensor.extract_slice %cast[0, 0, 0] [%b2, 5, 2] [1, 1, 1] : tensor<?x5x4xf32> to tensor<?x5x2xf32>
  %e = tensor.empty(%b2) : tensor<?x5x4xf32>
  %ins = tensor.insert_slice %s into %e[0, 0, 0] [%b2, 5, 2] [1, 1, 1] : tensor<?x5x2xf32> into tensor<?x5x4xf32>
  %cat = tensor.concat dim(2) %ins, %cast : (tensor<?x5x4xf32>, tensor<?x5x4xf32>) -> tensor<?x5x8xf32>
  %cst = arith.constant 0.0 : f32
  %pad = tensor.pad %x low[0, 0, 1] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f32
  } : tensor<?x5x4xf32> to tensor<?x5x6xf32>
  %sq = arith.mulf %pad, %pad : tensor<?x5x6xf32>
  %ex = math.exp %sq : tensor<?x5x6xf32>
  %row = tensor.extract_slice %cat[0, 0, 0] [%b, 1, 8] [1, 1, 1] : tensor<?x5x8xf32> to tensor<?x8xf32>
  return %x, %b, %row, %ex : tensor<?x5x4xf32>, index, tensor<?x8xf32>, tensor<?x5x6xf32>
}

// -----

// Scalars and 0-d tensors, scf.if and scf.for after the reduction (gradient
// clipping, a schedule): derived, placed after the loop.
// CHECK-LABEL: @scalars_and_regions: batch size 4, loops 1
// CHECK:        arg #0: uniform
// CHECK:        arg #1: batched(0) data
// CHECK:        linalg.reduce: reduced(add) data [loop 1]
// CHECK:        tensor.extract: derived data [after loop 1]
// CHECK:        arith.mulf: derived [after loop 1]
// CHECK:        math.sqrt: derived [after loop 1]
// CHECK:        arith.cmpf: derived [after loop 1]
// CHECK:        scf.if: derived [after loop 1]
// CHECK:        scf.for: derived [after loop 1]
func.func @scalars_and_regions(%lr: f32, %x: tensor<4xf32> {ga.batch = 0 : i64}) -> (f32, f32, f32) {
  %e = tensor.empty() : tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<4xf32>) outs(%e : tensor<f32>) dimensions = [0]
  %v = tensor.extract %s[] : tensor<f32>
  %g = arith.mulf %v, %lr : f32
  %n = math.sqrt %g : f32
  %one = arith.constant 1.0 : f32
  %big = arith.cmpf ogt, %n, %one : f32
  %clipped = scf.if %big -> f32 {
    %d = arith.divf %g, %n : f32
    scf.yield %d : f32
  } else {
    scf.yield %g : f32
  }
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %clipped) -> f32 {
    %h = arith.mulf %a, %lr : f32
    scf.yield %h : f32
  }
  %u = arith.addf %lr, %one : f32
  return %clipped, %acc, %u : f32, f32, f32
}

// -----

// A data-only statistic (token count of a padding mask) feeds per-sample
// math: it gets its own, earlier loop; the main loop comes second.
// CHECK-LABEL: @token_count: batch size 4, loops 2
// CHECK:        arg #0: uniform
// CHECK:        arg #1: batched(0) data
// CHECK:        linalg.reduce: reduced(add) data [loop 1]
// CHECK:        tensor.extract: derived data [after loop 1]
// CHECK:        linalg.generic: batched(0)
// CHECK:        linalg.reduce: reduced(add) [loop 2]
func.func @token_count(%w: f32, %mask: tensor<4x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %count = linalg.reduce { arith.addf } ins(%mask : tensor<4x3xf32>) outs(%e : tensor<f32>) dimensions = [0, 1]
  %c = tensor.extract %count[] : tensor<f32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b, t)>], iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<4x3xf32>) outs(%e2 : tensor<4x3xf32>) {
  ^bb0(%m: f32, %o: f32):
    %a = arith.mulf %m, %w : f32
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<4x3xf32>
  %loss = linalg.reduce { arith.addf } ins(%scaled : tensor<4x3xf32>) outs(%e : tensor<f32>) dimensions = [0, 1]
  return %loss : tensor<f32>
}

// -----

// Per-sample values inside scf.for (a per-sample iteration argument) and
// scf.if (one branch yields a uniform tensor): the results are per-sample,
// and so are the ops inside the regions.
// CHECK-LABEL: @structured: batch size 4, loops 1
// CHECK:         scf.for: batched(0) data
// CHECK:         scf.if: batched(0) data
// CHECK:         linalg.reduce: reduced(add) data [loop 1]
func.func @structured(%c: i1, %x: tensor<4x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4x3xf32>
  %h = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> tensor<4x3xf32> {
    %n = linalg.negf ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %n : tensor<4x3xf32>
  }
  %d = scf.if %c -> tensor<4x3xf32> {
    scf.yield %h : tensor<4x3xf32>
  } else {
    scf.yield %e : tensor<4x3xf32>
  }
  %e3 = tensor.empty() : tensor<3xf32>
  %s = linalg.reduce { arith.addf } ins(%d : tensor<4x3xf32>) outs(%e3 : tensor<3xf32>) dimensions = [0]
  return %s : tensor<3xf32>
}
