// A step made of the products --ga-isolate-library-products and
// --convert-linalg-to-blas take (test/Integration/CPU/blas-products.test):
// attention-style scores through a linalg.transpose that the product absorbs
// (s = q k^T, batched), both batched gradients (dq = ds k, plain; dk = ds^T q,
// transposed A), weight gradients that reduce over the collapsed [B*T] rows
// (transposed A, accumulated over micro-batches with beta = 1), a
// matrix-vector product (r = x v) and a vector-matrix product whose
// reduction is the batch (dv = x^T dr). The loss is linear in the scores, so
// the step is well-conditioned: float32 rounding stays at float32 rounding.
//   q = x wq, k = x wk (x as [B*T, D]); s = q k^T per sample; r = x v
//   loss = (sum(s * y) + sum(r * r) / 2) / (B*T)
// B = 5 (a remainder micro-batch with N = 3), T = 4, D = 8.
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#blhs_t = affine_map<(b, m, n, k) -> (b, k, m)>
#brhs = affine_map<(b, m, n, k) -> (b, k, n)>
#bout = affine_map<(b, m, n, k) -> (b, m, n)>
#id1 = affine_map<(i) -> (i)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#all1 = affine_map<(i) -> ()>
#all3 = affine_map<(b, i, j) -> ()>
func.func @train_step(%wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %v: tensor<8xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<5x4x8xf32> {ga.batch = 0 : i64},
                      %y: tensor<5x4x4xf32> {ga.batch = 0 : i64})
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %inv_n = arith.constant 0.05 : f32  // 1 / (B*T) = 1 / 20
  %e_nd = tensor.empty() : tensor<20x8xf32>
  %z_nd = linalg.fill ins(%zero : f32) outs(%e_nd : tensor<20x8xf32>) -> tensor<20x8xf32>
  %e_n = tensor.empty() : tensor<20xf32>
  %z_n = linalg.fill ins(%zero : f32) outs(%e_n : tensor<20xf32>) -> tensor<20xf32>
  %e_btt = tensor.empty() : tensor<5x4x4xf32>
  %z_btt = linalg.fill ins(%zero : f32) outs(%e_btt : tensor<5x4x4xf32>) -> tensor<5x4x4xf32>
  %e_btd = tensor.empty() : tensor<5x4x8xf32>
  %z_btd = linalg.fill ins(%zero : f32) outs(%e_btd : tensor<5x4x8xf32>) -> tensor<5x4x8xf32>
  %e_dd = tensor.empty() : tensor<8x8xf32>
  %z_dd = linalg.fill ins(%zero : f32) outs(%e_dd : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e_d = tensor.empty() : tensor<8xf32>
  %z_d = linalg.fill ins(%zero : f32) outs(%e_d : tensor<8xf32>) -> tensor<8xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>

  // Forward.
  %xf = tensor.collapse_shape %x [[0, 1], [2]] : tensor<5x4x8xf32> into tensor<20x8xf32>
  %q = linalg.matmul ins(%xf, %wq : tensor<20x8xf32>, tensor<8x8xf32>) outs(%z_nd : tensor<20x8xf32>) -> tensor<20x8xf32>
  %k = linalg.matmul ins(%xf, %wk : tensor<20x8xf32>, tensor<8x8xf32>) outs(%z_nd : tensor<20x8xf32>) -> tensor<20x8xf32>
  %q3 = tensor.expand_shape %q [[0, 1], [2]] output_shape [5, 4, 8] : tensor<20x8xf32> into tensor<5x4x8xf32>
  %k3 = tensor.expand_shape %k [[0, 1], [2]] output_shape [5, 4, 8] : tensor<20x8xf32> into tensor<5x4x8xf32>
  %e_bdt = tensor.empty() : tensor<5x8x4xf32>
  %kt = linalg.transpose ins(%k3 : tensor<5x4x8xf32>) outs(%e_bdt : tensor<5x8x4xf32>) permutation = [0, 2, 1]
  %s = linalg.batch_matmul ins(%q3, %kt : tensor<5x4x8xf32>, tensor<5x8x4xf32>)
                           outs(%z_btt : tensor<5x4x4xf32>) -> tensor<5x4x4xf32>
  %r = linalg.matvec ins(%xf, %v : tensor<20x8xf32>, tensor<8xf32>) outs(%z_n : tensor<20xf32>) -> tensor<20xf32>
  %sy = linalg.generic {indexing_maps = [#id3, #id3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%s, %y : tensor<5x4x4xf32>, tensor<5x4x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %rr = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%r : tensor<20xf32>) outs(%sy : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %a, %a : f32
    %h = arith.mulf %p, %half : f32
    %t = arith.addf %acc, %h : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%rr : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %inv_n : f32
    linalg.yield %t : f32
  } -> tensor<f32>

  // Backward: ds = y / 20, dr = r / 20.
  %ds = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<5x4x4xf32>) outs(%e_btt : tensor<5x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %inv_n : f32
    linalg.yield %t : f32
  } -> tensor<5x4x4xf32>
  %dr = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%r : tensor<20xf32>) outs(%e_n : tensor<20xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %inv_n : f32
    linalg.yield %t : f32
  } -> tensor<20xf32>
  %dq3 = linalg.batch_matmul ins(%ds, %k3 : tensor<5x4x4xf32>, tensor<5x4x8xf32>)
                             outs(%z_btd : tensor<5x4x8xf32>) -> tensor<5x4x8xf32>
  %dk3 = linalg.batch_matmul indexing_maps = [#blhs_t, #brhs, #bout]
                             ins(%ds, %q3 : tensor<5x4x4xf32>, tensor<5x4x8xf32>)
                             outs(%z_btd : tensor<5x4x8xf32>) -> tensor<5x4x8xf32>
  %dq = tensor.collapse_shape %dq3 [[0, 1], [2]] : tensor<5x4x8xf32> into tensor<20x8xf32>
  %dk = tensor.collapse_shape %dk3 [[0, 1], [2]] : tensor<5x4x8xf32> into tensor<20x8xf32>
  %dwq = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%xf, %dq : tensor<20x8xf32>, tensor<20x8xf32>) outs(%z_dd : tensor<8x8xf32>) -> tensor<8x8xf32>
  %dwk = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%xf, %dk : tensor<20x8xf32>, tensor<20x8xf32>) outs(%z_dd : tensor<8x8xf32>) -> tensor<8x8xf32>
  %dv = linalg.vecmat ins(%dr, %xf : tensor<20xf32>, tensor<20x8xf32>) outs(%z_d : tensor<8xf32>) -> tensor<8xf32>

  // SGD.
  %wq_new = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%wq, %dwq : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e_dd : tensor<8x8xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %u = arith.mulf %g, %lr : f32
    %t = arith.subf %w, %u : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  %wk_new = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%wk, %dwk : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e_dd : tensor<8x8xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %u = arith.mulf %g, %lr : f32
    %t = arith.subf %w, %u : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  %v_new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%v, %dv : tensor<8xf32>, tensor<8xf32>) outs(%e_d : tensor<8xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %u = arith.mulf %g, %lr : f32
    %t = arith.subf %w, %u : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %wq_new, %wk_new, %v_new, %loss : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<f32>
}
