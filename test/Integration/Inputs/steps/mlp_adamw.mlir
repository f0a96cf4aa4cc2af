// 2-layer MLP classifier (ReLU, softmax cross-entropy on integer labels) trained with AdamW
// as torch.optim.AdamW does it, after global gradient-norm clipping (clip_grad_norm_):
//   c = min(1, max_norm / (||g||_2 + 1e-6)) ; g = c g
//   w = w (1 - lr wd)   (weight matrices only)
//   m = b1 m + (1 - b1) g ; v = b2 v + (1 - b2) g^2
//   p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// The step counter t is an i64 scalar; the bias corrections use math.powf. Results: new params,
// new first and second moments, the loss and the (pre-clipping) global gradient norm.
// B = 24, in = 16, hidden = 32, classes = 10.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#s2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#s1 = affine_map<(i) -> ()>
#id0 = affine_map<() -> ()>
func.func @train_step(%w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x10xf32>, %b2: tensor<10xf32>,
                      %m_w1: tensor<16x32xf32>, %m_b1: tensor<32xf32>,
                      %m_w2: tensor<32x10xf32>, %m_b2: tensor<10xf32>,
                      %v_w1: tensor<16x32xf32> {ga.init = "positive"}, %v_b1: tensor<32xf32> {ga.init = "positive"},
                      %v_w2: tensor<32x10xf32> {ga.init = "positive"}, %v_b2: tensor<10xf32> {ga.init = "positive"},
                      %step: i64 {ga.range = [1, 100]},
                      %lr: f32 {ga.init = "uniform"}, %beta1: f32 {ga.init = "uniform"},
                      %beta2: f32 {ga.init = "uniform"}, %eps: f32 {ga.init = "positive"},
                      %weight_decay: f32 {ga.init = "uniform"}, %max_norm: f32 {ga.init = "positive"},
                      %x: tensor<24x16xf32> {ga.batch = 0 : i64},
                      %labels: tensor<24xi64> {ga.batch = 0 : i64, ga.range = [0, 10]})
    -> (tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>, tensor<f32>, f32) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 0.0416666679 : f32   // 1 / 24

  // ---------------- forward
  %e_bh = tensor.empty() : tensor<24x32xf32>
  %z_bh = linalg.fill ins(%zero : f32) outs(%e_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<24x16xf32>, tensor<16x32xf32>)
                       outs(%z_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %z1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<24x32xf32>, tensor<32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x32xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z1 : tensor<24x32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x32xf32>

  %e_bc = tensor.empty() : tensor<24x10xf32>
  %z_bc = linalg.fill ins(%zero : f32) outs(%e_bc : tensor<24x10xf32>) -> tensor<24x10xf32>
  %aw2 = linalg.matmul ins(%a1, %w2 : tensor<24x32xf32>, tensor<32x10xf32>)
                       outs(%z_bc : tensor<24x10xf32>) -> tensor<24x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%aw2, %b2 : tensor<24x10xf32>, tensor<10xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x10xf32>

  // softmax cross-entropy
  %e_b = tensor.empty() : tensor<24xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%logits : tensor<24x10xf32>) outs(%ninf_b : tensor<24xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<24x10xf32>, tensor<24xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<24x10xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<24x10xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<24xi64>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%lab: i64, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<24x10xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot, %logits : tensor<24x10xf32>, tensor<24x10xf32>) outs(%z_b : tensor<24xf32>) {
  ^bb0(%h: f32, %l: f32, %acc: f32):
    %p = arith.mulf %h, %l : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<24xf32>
  %nll = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%se, %mx, %picked : tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) outs(%e_b : tensor<24xf32>) {
  ^bb0(%s: f32, %m: f32, %p: f32, %o: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %m : f32
    %n = arith.subf %lse, %p : f32
    linalg.yield %n : f32
  } -> tensor<24xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%nll : tensor<24xf32>) outs(%z_s : tensor<f32>) dimensions = [0]
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---------------- backward
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<24x10xf32>, tensor<24xf32>, tensor<24x10xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<24x10xf32>
  %e_hb = tensor.empty() : tensor<32x24xf32>
  %a1t = linalg.transpose ins(%a1 : tensor<24x32xf32>) outs(%e_hb : tensor<32x24xf32>) permutation = [1, 0]
  %e_hc = tensor.empty() : tensor<32x10xf32>
  %z_hc = linalg.fill ins(%zero : f32) outs(%e_hc : tensor<32x10xf32>) -> tensor<32x10xf32>
  %dw2 = linalg.matmul ins(%a1t, %dlogits : tensor<32x24xf32>, tensor<24x10xf32>)
                       outs(%z_hc : tensor<32x10xf32>) -> tensor<32x10xf32>
  %e_c = tensor.empty() : tensor<10xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<24x10xf32>) outs(%z_c : tensor<10xf32>) dimensions = [0]
  %e_ch = tensor.empty() : tensor<10x32xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<32x10xf32>) outs(%e_ch : tensor<10x32xf32>) permutation = [1, 0]
  %da1 = linalg.matmul ins(%dlogits, %w2t : tensor<24x10xf32>, tensor<10x32xf32>)
                       outs(%z_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %dz1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %z1 : tensor<24x32xf32>, tensor<24x32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x32xf32>
  %e_db = tensor.empty() : tensor<16x24xf32>
  %xt = linalg.transpose ins(%x : tensor<24x16xf32>) outs(%e_db : tensor<16x24xf32>) permutation = [1, 0]
  %e_dh = tensor.empty() : tensor<16x32xf32>
  %z_dh = linalg.fill ins(%zero : f32) outs(%e_dh : tensor<16x32xf32>) -> tensor<16x32xf32>
  %dw1 = linalg.matmul ins(%xt, %dz1 : tensor<16x24xf32>, tensor<24x32xf32>)
                       outs(%z_dh : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e_h = tensor.empty() : tensor<32xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<32xf32>) -> tensor<32xf32>
  %db1 = linalg.reduce { arith.addf } ins(%dz1 : tensor<24x32xf32>) outs(%z_h : tensor<32xf32>) dimensions = [0]

  // ---------------- global gradient-norm clipping (torch.nn.utils.clip_grad_norm_)
  %sq_w1 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%dw1 : tensor<16x32xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%g: f32, %acc: f32):
    %g2 = arith.mulf %g, %g : f32
    %s = arith.addf %acc, %g2 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %sq_b1 = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%db1 : tensor<32xf32>) outs(%sq_w1 : tensor<f32>) {
  ^bb0(%g: f32, %acc: f32):
    %g2 = arith.mulf %g, %g : f32
    %s = arith.addf %acc, %g2 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %sq_w2 = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%dw2 : tensor<32x10xf32>) outs(%sq_b1 : tensor<f32>) {
  ^bb0(%g: f32, %acc: f32):
    %g2 = arith.mulf %g, %g : f32
    %s = arith.addf %acc, %g2 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %sq_b2 = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%db2 : tensor<10xf32>) outs(%sq_w2 : tensor<f32>) {
  ^bb0(%g: f32, %acc: f32):
    %g2 = arith.mulf %g, %g : f32
    %s = arith.addf %acc, %g2 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %sumsq = tensor.extract %sq_b2[] : tensor<f32>
  %gnorm = math.sqrt %sumsq : f32
  %tiny = arith.constant 1.0e-6 : f32
  %gnorm_eps = arith.addf %gnorm, %tiny : f32
  %clip_raw = arith.divf %max_norm, %gnorm_eps : f32
  %clip = arith.minimumf %clip_raw, %one : f32

  // ---------------- AdamW (torch.optim.AdamW, decoupled weight decay on the weight matrices)
  %t = arith.sitofp %step : i64 to f32
  %b1t = math.powf %beta1, %t : f32
  %b2t = math.powf %beta2, %t : f32
  %bc1 = arith.subf %one, %b1t : f32
  %bc2 = arith.subf %one, %b2t : f32
  %bc2_sqrt = math.sqrt %bc2 : f32
  %step_size = arith.divf %lr, %bc1 : f32
  %omb1 = arith.subf %one, %beta1 : f32
  %omb2 = arith.subf %one, %beta2 : f32
  %lr_wd = arith.mulf %lr, %weight_decay : f32
  %decay = arith.subf %one, %lr_wd : f32
  %e_w1n = tensor.empty() : tensor<16x32xf32>
  %e_mw1n = tensor.empty() : tensor<16x32xf32>
  %e_vw1n = tensor.empty() : tensor<16x32xf32>
  %w1n, %mw1n, %vw1n = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1, %m_w1, %v_w1 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>)
      outs(%e_w1n, %e_mw1n, %e_vw1n : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  ^bb0(%p: f32, %graw: f32, %m: f32, %v: f32, %o1: f32, %o2: f32, %o3: f32):
    %pd = arith.mulf %p, %decay : f32
    %g = arith.mulf %graw, %clip : f32
    %m1 = arith.mulf %beta1, %m : f32
    %m2 = arith.mulf %omb1, %g : f32
    %mn = arith.addf %m1, %m2 : f32
    %v1 = arith.mulf %beta2, %v : f32
    %gg = arith.mulf %g, %g : f32
    %v2 = arith.mulf %omb2, %gg : f32
    %vn = arith.addf %v1, %v2 : f32
    %sv = math.sqrt %vn : f32
    %svc = arith.divf %sv, %bc2_sqrt : f32
    %den = arith.addf %svc, %eps : f32
    %r = arith.divf %mn, %den : f32
    %u = arith.mulf %step_size, %r : f32
    %pn = arith.subf %pd, %u : f32
    linalg.yield %pn, %mn, %vn : f32, f32, f32
  } -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>)
  %e_b1n = tensor.empty() : tensor<32xf32>
  %e_mb1n = tensor.empty() : tensor<32xf32>
  %e_vb1n = tensor.empty() : tensor<32xf32>
  %b1n, %mb1n, %vb1n = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1, %m_b1, %v_b1 : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%e_b1n, %e_mb1n, %e_vb1n : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%p: f32, %graw: f32, %m: f32, %v: f32, %o1: f32, %o2: f32, %o3: f32):
    %g = arith.mulf %graw, %clip : f32
    %m1 = arith.mulf %beta1, %m : f32
    %m2 = arith.mulf %omb1, %g : f32
    %mn = arith.addf %m1, %m2 : f32
    %v1 = arith.mulf %beta2, %v : f32
    %gg = arith.mulf %g, %g : f32
    %v2 = arith.mulf %omb2, %gg : f32
    %vn = arith.addf %v1, %v2 : f32
    %sv = math.sqrt %vn : f32
    %svc = arith.divf %sv, %bc2_sqrt : f32
    %den = arith.addf %svc, %eps : f32
    %r = arith.divf %mn, %den : f32
    %u = arith.mulf %step_size, %r : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %mn, %vn : f32, f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  %e_w2n = tensor.empty() : tensor<32x10xf32>
  %e_mw2n = tensor.empty() : tensor<32x10xf32>
  %e_vw2n = tensor.empty() : tensor<32x10xf32>
  %w2n, %mw2n, %vw2n = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2, %m_w2, %v_w2 : tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x10xf32>)
      outs(%e_w2n, %e_mw2n, %e_vw2n : tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x10xf32>) {
  ^bb0(%p: f32, %graw: f32, %m: f32, %v: f32, %o1: f32, %o2: f32, %o3: f32):
    %pd = arith.mulf %p, %decay : f32
    %g = arith.mulf %graw, %clip : f32
    %m1 = arith.mulf %beta1, %m : f32
    %m2 = arith.mulf %omb1, %g : f32
    %mn = arith.addf %m1, %m2 : f32
    %v1 = arith.mulf %beta2, %v : f32
    %gg = arith.mulf %g, %g : f32
    %v2 = arith.mulf %omb2, %gg : f32
    %vn = arith.addf %v1, %v2 : f32
    %sv = math.sqrt %vn : f32
    %svc = arith.divf %sv, %bc2_sqrt : f32
    %den = arith.addf %svc, %eps : f32
    %r = arith.divf %mn, %den : f32
    %u = arith.mulf %step_size, %r : f32
    %pn = arith.subf %pd, %u : f32
    linalg.yield %pn, %mn, %vn : f32, f32, f32
  } -> (tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x10xf32>)
  %e_b2n = tensor.empty() : tensor<10xf32>
  %e_mb2n = tensor.empty() : tensor<10xf32>
  %e_vb2n = tensor.empty() : tensor<10xf32>
  %b2n, %mb2n, %vb2n = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2, %m_b2, %v_b2 : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>)
      outs(%e_b2n, %e_mb2n, %e_vb2n : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) {
  ^bb0(%p: f32, %graw: f32, %m: f32, %v: f32, %o1: f32, %o2: f32, %o3: f32):
    %g = arith.mulf %graw, %clip : f32
    %m1 = arith.mulf %beta1, %m : f32
    %m2 = arith.mulf %omb1, %g : f32
    %mn = arith.addf %m1, %m2 : f32
    %v1 = arith.mulf %beta2, %v : f32
    %gg = arith.mulf %g, %g : f32
    %v2 = arith.mulf %omb2, %gg : f32
    %vn = arith.addf %v1, %v2 : f32
    %sv = math.sqrt %vn : f32
    %svc = arith.divf %sv, %bc2_sqrt : f32
    %den = arith.addf %svc, %eps : f32
    %r = arith.divf %mn, %den : f32
    %u = arith.mulf %step_size, %r : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %mn, %vn : f32, f32, f32
  } -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>)
  return %w1n, %b1n, %w2n, %b2n, %mw1n, %mb1n, %mw2n, %mb2n, %vw1n, %vb1n, %vw2n, %vb2n, %loss, %gnorm
      : tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>, tensor<f32>, f32
}
