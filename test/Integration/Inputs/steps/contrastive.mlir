// In-batch contrastive (InfoNCE / NT-Xent) step: samples 2k and 2k+1 are two views of one item.
//   e = tanh(x w + b) ; s_ij = e_i . e_j / tau (tau = 0.5), s_ii = -inf
//   loss = (1/B) sum_i [logsumexp_j s_ij - s_i,pos(i)],  pos(i) = i xor 1
//   ds = (softmax_j(s) - onehot(pos)) / B ; de = (ds + ds^T) e / tau
// Every sample's loss depends on every other sample's embedding (the similarity matrix is
// [B, B]): a micro-batch rewrite must REFUSE this step (batch coupling).
// B = 12, in = 16, embedding = 8.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#id1 = affine_map<(i) -> (i)>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%w: tensor<16x8xf32>, %b: tensor<8xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<12x16xf32> {ga.batch = 0 : i64})
    -> (tensor<16x8xf32>, tensor<8xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_tau = arith.constant 2.0 : f32
  %inv_b = arith.constant 0.0833333358 : f32   // 1 / 12
  %c1 = arith.constant 1 : index

  // ---------------- forward
  %e_be = tensor.empty() : tensor<12x8xf32>
  %z_be = linalg.fill ins(%zero : f32) outs(%e_be : tensor<12x8xf32>) -> tensor<12x8xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<12x16xf32>, tensor<16x8xf32>) outs(%z_be : tensor<12x8xf32>) -> tensor<12x8xf32>
  %emb = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b : tensor<12x8xf32>, tensor<8xf32>) outs(%e_be : tensor<12x8xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<12x8xf32>
  // similarity matrix over the batch
  %e_bb = tensor.empty() : tensor<12x12xf32>
  %z_bb = linalg.fill ins(%zero : f32) outs(%e_bb : tensor<12x12xf32>) -> tensor<12x12xf32>
  %gram = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                        ins(%emb, %emb : tensor<12x8xf32>, tensor<12x8xf32>)
                        outs(%z_bb : tensor<12x12xf32>) -> tensor<12x12xf32>
  %sim = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%gram : tensor<12x12xf32>) outs(%e_bb : tensor<12x12xf32>) {
  ^bb0(%g: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %self = arith.cmpi eq, %i, %j : index
    %s = arith.mulf %g, %inv_tau : f32
    %r = arith.select %self, %ninf, %s : f32
    linalg.yield %r : f32
  } -> tensor<12x12xf32>
  %e_b = tensor.empty() : tensor<12xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<12xf32>) -> tensor<12xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<12xf32>) -> tensor<12xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%sim : tensor<12x12xf32>) outs(%ninf_b : tensor<12xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sim, %mx : tensor<12x12xf32>, tensor<12xf32>) outs(%e_bb : tensor<12x12xf32>) {
  ^bb0(%s: f32, %m: f32, %o: f32):
    %d = arith.subf %s, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<12x12xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<12x12xf32>) outs(%z_b : tensor<12xf32>) dimensions = [1]
  // positives: target[i, j] = [j == i xor 1]
  %target = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%e_bb : tensor<12x12xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %pi = arith.xori %i, %c1 : index
    %is = arith.cmpi eq, %j, %pi : index
    %v = arith.select %is, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<12x12xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%target, %gram : tensor<12x12xf32>, tensor<12x12xf32>) outs(%z_b : tensor<12xf32>) {
  ^bb0(%t: f32, %g: f32, %acc: f32):
    %s = arith.mulf %g, %inv_tau : f32
    %p = arith.mulf %t, %s : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<12xf32>
  %nll = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%se, %mx, %picked : tensor<12xf32>, tensor<12xf32>, tensor<12xf32>) outs(%e_b : tensor<12xf32>) {
  ^bb0(%s: f32, %m: f32, %p: f32, %o: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %m : f32
    %n = arith.subf %lse, %p : f32
    linalg.yield %n : f32
  } -> tensor<12xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%nll : tensor<12xf32>) outs(%z_s : tensor<f32>) dimensions = [0]
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---------------- backward
  // dgram = (softmax - target) / B / tau  (zero on the diagonal)
  %dgram = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %target : tensor<12x12xf32>, tensor<12xf32>, tensor<12x12xf32>) outs(%e_bb : tensor<12x12xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %t : f32
    %g = arith.mulf %d, %inv_b : f32
    %gs = arith.mulf %g, %inv_tau : f32
    linalg.yield %gs : f32
  } -> tensor<12x12xf32>
  // demb = dgram emb + dgram^T emb (the second GEMM accumulates into the first)
  %demb_a = linalg.matmul ins(%dgram, %emb : tensor<12x12xf32>, tensor<12x8xf32>)
                          outs(%z_be : tensor<12x8xf32>) -> tensor<12x8xf32>
  %demb = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                        ins(%dgram, %emb : tensor<12x12xf32>, tensor<12x8xf32>)
                        outs(%demb_a : tensor<12x8xf32>) -> tensor<12x8xf32>
  %dz = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%demb, %emb : tensor<12x8xf32>, tensor<12x8xf32>) outs(%e_be : tensor<12x8xf32>) {
  ^bb0(%g: f32, %t: f32, %o: f32):
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<12x8xf32>
  %e_de = tensor.empty() : tensor<16x8xf32>
  %z_de = linalg.fill ins(%zero : f32) outs(%e_de : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dw = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                      ins(%x, %dz : tensor<12x16xf32>, tensor<12x8xf32>)
                      outs(%z_de : tensor<16x8xf32>) -> tensor<16x8xf32>
  %e_e = tensor.empty() : tensor<8xf32>
  %z_e = linalg.fill ins(%zero : f32) outs(%e_e : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.reduce { arith.addf } ins(%dz : tensor<12x8xf32>) outs(%z_e : tensor<8xf32>) dimensions = [0]

  // ---------------- SGD
  %w_n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e_de : tensor<16x8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16x8xf32>
  %b_n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b, %db : tensor<8xf32>, tensor<8xf32>) outs(%e_e : tensor<8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %w_n, %b_n, %loss : tensor<16x8xf32>, tensor<8xf32>, tensor<f32>
}
