// A classifier step whose masks are i1 tensors that fusion keeps (each has
// two readers), as in a transformer's step: s = x w (B = 12, K = 16 classes);
//   allowed[b, k] = k <= label_b or k < 2          (a causal-style mask)
//   hot[b, k]     = k == label_b                   (the one-hot mask)
//   any[b]        = OR_k (allowed[b, k] and s > 0) (an i1 row reduction)
//   m = allowed ? s : -inf ; weight_b = any_b ? 1 : 1/2
//   loss = sum_b weight_b (logsumexp(m_b) - m_b[label_b]) / B
//   dm = allowed ? weight_b (softmax(m_b) - hot) / B : 0 ; dw = x^T dm ; SGD
// Used by ../widen-i1-tensors.test.
#bk = affine_map<(b, k) -> (b, k)>
#b = affine_map<(b, k) -> (b)>
#k = affine_map<(b, k) -> (k)>
#id1 = affine_map<(b) -> (b)>
#s1 = affine_map<(b) -> ()>
func.func @train_step(%w: tensor<8x16xf32>, %lr: f32 {ga.init = "uniform"},
                      %x: tensor<12x8xf32> {ga.batch = 0 : i64},
                      %labels: tensor<12xi64> {ga.batch = 0 : i64})
    -> (tensor<8x16xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 0.0833333358 : f32   // 1 / 12
  %c2 = arith.constant 2 : i64
  %false = arith.constant false

  %e_bk = tensor.empty() : tensor<12x16xf32>
  %z_bk = linalg.fill ins(%zero : f32) outs(%e_bk : tensor<12x16xf32>) -> tensor<12x16xf32>
  %s = linalg.matmul ins(%x, %w : tensor<12x8xf32>, tensor<8x16xf32>) outs(%z_bk : tensor<12x16xf32>) -> tensor<12x16xf32>

  // ---- masks (i1 tensors)
  %e_m = tensor.empty() : tensor<12x16xi1>
  %classes = tensor.empty() : tensor<16xi64>
  %iota = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%classes : tensor<16xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<16xi64>
  %allowed = linalg.generic {indexing_maps = [#b, #k, #bk], iterator_types = ["parallel", "parallel"]}
      ins(%labels, %iota : tensor<12xi64>, tensor<16xi64>) outs(%e_m : tensor<12x16xi1>) {
  ^bb0(%l: i64, %c: i64, %o: i1):
    %le = arith.cmpi sle, %c, %l : i64
    %lo = arith.cmpi slt, %c, %c2 : i64
    %a = arith.ori %le, %lo : i1
    linalg.yield %a : i1
  } -> tensor<12x16xi1>
  %hot = linalg.generic {indexing_maps = [#b, #k, #bk], iterator_types = ["parallel", "parallel"]}
      ins(%labels, %iota : tensor<12xi64>, tensor<16xi64>) outs(%e_m : tensor<12x16xi1>) {
  ^bb0(%l: i64, %c: i64, %o: i1):
    %eq = arith.cmpi eq, %c, %l : i64
    linalg.yield %eq : i1
  } -> tensor<12x16xi1>
  %e_any = tensor.empty() : tensor<12xi1>
  %f_any = linalg.fill ins(%false : i1) outs(%e_any : tensor<12xi1>) -> tensor<12xi1>
  %any = linalg.generic {indexing_maps = [#bk, #bk, #b], iterator_types = ["parallel", "reduction"]}
      ins(%allowed, %s : tensor<12x16xi1>, tensor<12x16xf32>) outs(%f_any : tensor<12xi1>) {
  ^bb0(%a: i1, %v: f32, %acc: i1):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %both = arith.andi %a, %pos : i1
    %r = arith.ori %acc, %both : i1
    linalg.yield %r : i1
  } -> tensor<12xi1>

  // ---- forward: masked scores, row maximum, log-sum-exp, target score
  %m = linalg.generic {indexing_maps = [#bk, #bk, #bk], iterator_types = ["parallel", "parallel"]}
      ins(%allowed, %s : tensor<12x16xi1>, tensor<12x16xf32>) outs(%e_bk : tensor<12x16xf32>) {
  ^bb0(%a: i1, %v: f32, %o: f32):
    %r = arith.select %a, %v, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<12x16xf32>
  %e_b = tensor.empty() : tensor<12xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<12xf32>) -> tensor<12xf32>
  %max = linalg.reduce { arith.maximumf } ins(%m : tensor<12x16xf32>) outs(%ninf_b : tensor<12xf32>) dimensions = [1]
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<12xf32>) -> tensor<12xf32>
  %sumexp, %target = linalg.generic {indexing_maps = [#bk, #bk, #b, #b, #b], iterator_types = ["parallel", "reduction"]}
      ins(%m, %hot, %max : tensor<12x16xf32>, tensor<12x16xi1>, tensor<12xf32>) outs(%z_b, %z_b : tensor<12xf32>, tensor<12xf32>) {
  ^bb0(%v: f32, %h: i1, %mx: f32, %acc: f32, %t: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %n = arith.addf %acc, %e : f32
    %pick = arith.select %h, %v, %zero : f32
    %t2 = arith.addf %t, %pick : f32
    linalg.yield %n, %t2 : f32, f32
  } -> (tensor<12xf32>, tensor<12xf32>)
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #s1], iterator_types = ["reduction"]}
      ins(%sumexp, %max, %target, %any : tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xi1>) outs(%z_s : tensor<f32>) {
  ^bb0(%se: f32, %mx: f32, %t: f32, %ok: i1, %acc: f32):
    %lg = math.log %se : f32
    %lse = arith.addf %lg, %mx : f32
    %nll = arith.subf %lse, %t : f32
    %wt = arith.select %ok, %one, %half : f32
    %wn = arith.mulf %wt, %nll : f32
    %sc = arith.mulf %wn, %inv_b : f32
    %r = arith.addf %acc, %sc : f32
    linalg.yield %r : f32
  } -> tensor<f32>

  // ---- backward: dm = allowed ? weight (softmax - hot) / B : 0
  %dm = linalg.generic {indexing_maps = [#bk, #bk, #bk, #b, #b, #b, #bk], iterator_types = ["parallel", "parallel"]}
      ins(%m, %allowed, %hot, %max, %sumexp, %any : tensor<12x16xf32>, tensor<12x16xi1>, tensor<12x16xi1>, tensor<12xf32>, tensor<12xf32>, tensor<12xi1>)
      outs(%e_bk : tensor<12x16xf32>) {
  ^bb0(%v: f32, %a: i1, %h: i1, %mx: f32, %se: f32, %ok: i1, %o: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %se : f32
    %y = arith.select %h, %one, %zero : f32
    %g = arith.subf %p, %y : f32
    %wt = arith.select %ok, %one, %half : f32
    %gw = arith.mulf %g, %wt : f32
    %gb = arith.mulf %gw, %inv_b : f32
    %r = arith.select %a, %gb, %zero : f32
    linalg.yield %r : f32
  } -> tensor<12x16xf32>
  %e_w = tensor.empty() : tensor<8x16xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<8x16xf32>) -> tensor<8x16xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %dm : tensor<12x8xf32>, tensor<12x16xf32>) outs(%z_w : tensor<8x16xf32>) -> tensor<8x16xf32>

  // ---- SGD
  %w_new = linalg.generic {indexing_maps = [#bk, #bk, #bk], iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e_w : tensor<8x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %s2 = arith.mulf %lr, %g : f32
    %u = arith.subf %p, %s2 : f32
    linalg.yield %u : f32
  } -> tensor<8x16xf32>
  return %w_new, %loss : tensor<8x16xf32>, tensor<f32>
}
