// Token-level model with a padding mask and token-count normalization (the loss of
// transformers#34191): tokens [B, T] -> embedding gather -> tanh -> linear -> softmax
// cross-entropy per token against targets [B, T];
//   loss = sum(mask * nll) / max(sum(mask), 1)
// Every token's gradient is divided by the GLOBAL token count, which is a batch reduction
// of data only (the mask): dlogits = mask * (softmax - onehot(target)) / count.
// Embedding backward is a one-hot scatter-add written as a linalg.generic reducing over (b, t).
// B = 12, T = 8, vocab = 20, dim = 16; tokens are flattened to [B*T] with tensor.collapse_shape.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#all2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%emb: tensor<20x16xf32>, %w: tensor<16x20xf32>, %b: tensor<20xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %tokens: tensor<12x8xi64> {ga.batch = 0 : i64, ga.range = [0, 20]},
                      %targets: tensor<12x8xi64> {ga.batch = 0 : i64, ga.range = [0, 20]},
                      %mask: tensor<12x8xf32> {ga.batch = 0 : i64, ga.init = "mask"})
    -> (tensor<20x16xf32>, tensor<16x20xf32>, tensor<20xf32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32

  // ---------------- forward
  // embedding gather: e[b, t, d] = emb[tokens[b, t], d]
  %e_btd = tensor.empty() : tensor<12x8x16xf32>
  %x3 = linalg.generic {indexing_maps = [affine_map<(b, t, d) -> (b, t)>, affine_map<(b, t, d) -> (b, t, d)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tokens : tensor<12x8xi64>) outs(%e_btd : tensor<12x8x16xf32>) {
  ^bb0(%tok: i64, %o: f32):
    %ti = arith.index_cast %tok : i64 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %emb[%ti, %d] : tensor<20x16xf32>
    linalg.yield %v : f32
  } -> tensor<12x8x16xf32>
  %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<12x8x16xf32> into tensor<96x16xf32>
  %e_nd = tensor.empty() : tensor<96x16xf32>
  %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<96x16xf32>) outs(%e_nd : tensor<96x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<96x16xf32>
  %e_nv = tensor.empty() : tensor<96x20xf32>
  %z_nv = linalg.fill ins(%zero : f32) outs(%e_nv : tensor<96x20xf32>) -> tensor<96x20xf32>
  %hw = linalg.matmul ins(%h, %w : tensor<96x16xf32>, tensor<16x20xf32>)
                      outs(%z_nv : tensor<96x20xf32>) -> tensor<96x20xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw, %b : tensor<96x20xf32>, tensor<20xf32>) outs(%e_nv : tensor<96x20xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<96x20xf32>

  // per-token softmax cross-entropy
  %tgt = tensor.collapse_shape %targets [[0, 1]] : tensor<12x8xi64> into tensor<96xi64>
  %m = tensor.collapse_shape %mask [[0, 1]] : tensor<12x8xf32> into tensor<96xf32>
  %e_n = tensor.empty() : tensor<96xf32>
  %ninf_n = linalg.fill ins(%ninf : f32) outs(%e_n : tensor<96xf32>) -> tensor<96xf32>
  %z_n = linalg.fill ins(%zero : f32) outs(%e_n : tensor<96xf32>) -> tensor<96xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%logits : tensor<96x20xf32>) outs(%ninf_n : tensor<96xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<96x20xf32>, tensor<96xf32>) outs(%e_nv : tensor<96x20xf32>) {
  ^bb0(%l: f32, %mm: f32, %o: f32):
    %d = arith.subf %l, %mm : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<96x20xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<96x20xf32>) outs(%z_n : tensor<96xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%tgt : tensor<96xi64>) outs(%e_nv : tensor<96x20xf32>) {
  ^bb0(%lab: i64, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<96x20xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot, %logits : tensor<96x20xf32>, tensor<96x20xf32>) outs(%z_n : tensor<96xf32>) {
  ^bb0(%oh: f32, %l: f32, %acc: f32):
    %p = arith.mulf %oh, %l : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<96xf32>
  %nll = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%se, %mx, %picked : tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) outs(%e_n : tensor<96xf32>) {
  ^bb0(%s: f32, %mm: f32, %p: f32, %o: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %mm : f32
    %n = arith.subf %lse, %p : f32
    linalg.yield %n : f32
  } -> tensor<96xf32>

  // token count (data only) and the masked sum
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %ntok = linalg.reduce { arith.addf } ins(%mask : tensor<12x8xf32>) outs(%z_s : tensor<f32>) dimensions = [0, 1]
  %count = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%ntok : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%c: f32, %o: f32):
    %c1 = arith.maximumf %c, %one : f32
    linalg.yield %c1 : f32
  } -> tensor<f32>
  %msum = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%m, %nll : tensor<96xf32>, tensor<96xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%mk: f32, %n: f32, %acc: f32):
    %p = arith.mulf %mk, %n : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id0, #id0, #id0], iterator_types = []}
      ins(%msum, %count : tensor<f32>, tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %c: f32, %o: f32):
    %l = arith.divf %s, %c : f32
    linalg.yield %l : f32
  } -> tensor<f32>

  // ---------------- backward
  %cnt = tensor.extract %count[] : tensor<f32>
  %inv_cnt = arith.divf %one, %cnt : f32
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot, %m : tensor<96x20xf32>, tensor<96xf32>, tensor<96x20xf32>, tensor<96xf32>)
      outs(%e_nv : tensor<96x20xf32>) {
  ^bb0(%e: f32, %s: f32, %oh: f32, %mk: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %oh : f32
    %dm = arith.mulf %d, %mk : f32
    %g = arith.mulf %dm, %inv_cnt : f32
    linalg.yield %g : f32
  } -> tensor<96x20xf32>
  %e_dv = tensor.empty() : tensor<16x20xf32>
  %z_dv = linalg.fill ins(%zero : f32) outs(%e_dv : tensor<16x20xf32>) -> tensor<16x20xf32>
  %dw = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                      ins(%h, %dlogits : tensor<96x16xf32>, tensor<96x20xf32>)
                      outs(%z_dv : tensor<16x20xf32>) -> tensor<16x20xf32>
  %e_v = tensor.empty() : tensor<20xf32>
  %z_v = linalg.fill ins(%zero : f32) outs(%e_v : tensor<20xf32>) -> tensor<20xf32>
  %db = linalg.reduce { arith.addf } ins(%dlogits : tensor<96x20xf32>) outs(%z_v : tensor<20xf32>) dimensions = [0]
  %z_nd = linalg.fill ins(%zero : f32) outs(%e_nd : tensor<96x16xf32>) -> tensor<96x16xf32>
  %dh = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                      ins(%dlogits, %w : tensor<96x20xf32>, tensor<16x20xf32>)
                      outs(%z_nd : tensor<96x16xf32>) -> tensor<96x16xf32>
  %dx = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %h : tensor<96x16xf32>, tensor<96x16xf32>) outs(%e_nd : tensor<96x16xf32>) {
  ^bb0(%g: f32, %t: f32, %o: f32):
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<96x16xf32>
  %dx3 = tensor.expand_shape %dx [[0, 1], [2]] output_shape [12, 8, 16] : tensor<96x16xf32> into tensor<12x8x16xf32>
  // embedding scatter-add: demb[v, d] = sum_{b,t} [tokens[b,t] == v] * dx3[b, t, d]
  %e_vd = tensor.empty() : tensor<20x16xf32>
  %z_vd = linalg.fill ins(%zero : f32) outs(%e_vd : tensor<20x16xf32>) -> tensor<20x16xf32>
  %demb = linalg.generic {indexing_maps = [affine_map<(v, d, b, t) -> (b, t)>, affine_map<(v, d, b, t) -> (b, t, d)>,
                                           affine_map<(v, d, b, t) -> (v, d)>],
                          iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%tokens, %dx3 : tensor<12x8xi64>, tensor<12x8x16xf32>) outs(%z_vd : tensor<20x16xf32>) {
  ^bb0(%tok: i64, %g: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %vi, %tok : i64
    %s = arith.addf %acc, %g : f32
    %r = arith.select %eq, %s, %acc : f32
    linalg.yield %r : f32
  } -> tensor<20x16xf32>

  // ---------------- SGD
  %emb_n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb, %demb : tensor<20x16xf32>, tensor<20x16xf32>) outs(%e_vd : tensor<20x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<20x16xf32>
  %w_n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : tensor<16x20xf32>, tensor<16x20xf32>) outs(%e_dv : tensor<16x20xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16x20xf32>
  %b_n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b, %db : tensor<20xf32>, tensor<20xf32>) outs(%e_v : tensor<20xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<20xf32>
  return %emb_n, %w_n, %b_n, %loss, %ntok : tensor<20x16xf32>, tensor<16x20xf32>, tensor<20xf32>, tensor<f32>, tensor<f32>
}
