// MLP classifier with a training-mode BatchNorm layer between the first linear layer and the
// ReLU: the batch mean and (biased) variance of every hidden unit are computed over the batch
// and normalize every sample; the running statistics are updated (unbiased variance, as
// torch.nn.BatchNorm1d does). The backward couples the samples:
//   dz = rstd * (dzhat - mean_b(dzhat) - zhat * mean_b(dzhat * zhat))
// A micro-batch rewrite must REFUSE this step (batch statistics flow back into per-sample
// values), unless it opts into micro-batch ("ghost batch") statistics.
// B = 24, in = 16, hidden = 32, classes = 10; eps = 1e-5.
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
func.func @train_step(%w1: tensor<16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>,
                      %w2: tensor<32x10xf32>, %b2: tensor<10xf32>,
                      %running_mean: tensor<32xf32>,
                      %running_var: tensor<32xf32> {ga.init = "positive"},
                      %lr: f32 {ga.init = "uniform"},
                      %bn_momentum: f32 {ga.init = "uniform"},
                      %x: tensor<24x16xf32> {ga.batch = 0 : i64},
                      %labels: tensor<24xi64> {ga.batch = 0 : i64, ga.range = [0, 10]})
    -> (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<32xf32>, tensor<32xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.0e-5 : f32
  %inv_b = arith.constant 0.0416666679 : f32       // 1 / 24
  %unbias = arith.constant 1.04347825 : f32        // 24 / 23

  // ---------------- forward
  %e_bh = tensor.empty() : tensor<24x32xf32>
  %z_bh = linalg.fill ins(%zero : f32) outs(%e_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %z = linalg.matmul ins(%x, %w1 : tensor<24x16xf32>, tensor<16x32xf32>)
                     outs(%z_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  // batch statistics
  %e_h = tensor.empty() : tensor<32xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<32xf32>) -> tensor<32xf32>
  %zsum = linalg.reduce { arith.addf } ins(%z : tensor<24x32xf32>) outs(%z_h : tensor<32xf32>) dimensions = [0]
  %mean = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%zsum : tensor<32xf32>) outs(%e_h : tensor<32xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  %zc = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z, %mean : tensor<24x32xf32>, tensor<32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %c = arith.subf %v, %m : f32
    linalg.yield %c : f32
  } -> tensor<24x32xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%zc : tensor<24x32xf32>) outs(%z_h : tensor<32xf32>) {
  ^bb0(%c: f32, %acc: f32):
    %c2 = arith.mulf %c, %c : f32
    %s = arith.addf %acc, %c2 : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %var, %rstd = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%sq : tensor<32xf32>) outs(%e_h, %e_h : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%s: f32, %o1: f32, %o2: f32):
    %v = arith.mulf %s, %inv_b : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %v, %r : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  %zhat = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%zc, %rstd : tensor<24x32xf32>, tensor<32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%c: f32, %r: f32, %o: f32):
    %n = arith.mulf %c, %r : f32
    linalg.yield %n : f32
  } -> tensor<24x32xf32>
  %ybn = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%zhat, %gamma, %beta : tensor<24x32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%n: f32, %g: f32, %bb: f32, %o: f32):
    %s = arith.mulf %n, %g : f32
    %t = arith.addf %s, %bb : f32
    linalg.yield %t : f32
  } -> tensor<24x32xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ybn : tensor<24x32xf32>) outs(%e_bh : tensor<24x32xf32>) {
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

  // running statistics
  %rm_n, %rv_n = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%running_mean, %running_var, %mean, %var : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%e_h, %e_h : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%rm: f32, %rv: f32, %m: f32, %v: f32, %o1: f32, %o2: f32):
    %keep = arith.subf %one, %bn_momentum : f32
    %a = arith.mulf %keep, %rm : f32
    %b = arith.mulf %bn_momentum, %m : f32
    %nm = arith.addf %a, %b : f32
    %vu = arith.mulf %v, %unbias : f32
    %c = arith.mulf %keep, %rv : f32
    %d = arith.mulf %bn_momentum, %vu : f32
    %nv = arith.addf %c, %d : f32
    linalg.yield %nm, %nv : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)

  // ---------------- backward
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<24x10xf32>, tensor<24xf32>, tensor<24x10xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<24x10xf32>
  %e_hc = tensor.empty() : tensor<32x10xf32>
  %z_hc = linalg.fill ins(%zero : f32) outs(%e_hc : tensor<32x10xf32>) -> tensor<32x10xf32>
  %dw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%a1, %dlogits : tensor<24x32xf32>, tensor<24x10xf32>)
                       outs(%z_hc : tensor<32x10xf32>) -> tensor<32x10xf32>
  %e_c = tensor.empty() : tensor<10xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<24x10xf32>) outs(%z_c : tensor<10xf32>) dimensions = [0]
  %da1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dlogits, %w2 : tensor<24x10xf32>, tensor<32x10xf32>)
                       outs(%z_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %dy = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %ybn : tensor<24x32xf32>, tensor<24x32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%g: f32, %v: f32, %o: f32):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x32xf32>
  // dgamma = sum_b dy * zhat ; dbeta = sum_b dy (one two-result reduction over the batch)
  %dgamma, %dbeta = linalg.generic {indexing_maps = [#id2, #id2, #col, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %zhat : tensor<24x32xf32>, tensor<24x32xf32>) outs(%z_h, %z_h : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%g: f32, %n: f32, %acc1: f32, %acc2: f32):
    %gn = arith.mulf %g, %n : f32
    %s1 = arith.addf %acc1, %gn : f32
    %s2 = arith.addf %acc2, %g : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  // dzhat = dy * gamma; dz = rstd * (dzhat - mean_b(dzhat) - zhat * mean_b(dzhat * zhat))
  //       = rstd * (dzhat - dbeta * gamma / B - zhat * dgamma * gamma / B)
  %dz = linalg.generic {indexing_maps = [#id2, #id2, #col, #col, #col, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %zhat, %gamma, %rstd, %dbeta, %dgamma
          : tensor<24x32xf32>, tensor<24x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%g: f32, %n: f32, %gm: f32, %r: f32, %sb: f32, %sg: f32, %o: f32):
    %dzh = arith.mulf %g, %gm : f32
    %m1a = arith.mulf %sb, %gm : f32
    %m1 = arith.mulf %m1a, %inv_b : f32
    %m2a = arith.mulf %sg, %gm : f32
    %m2 = arith.mulf %m2a, %inv_b : f32
    %t1 = arith.subf %dzh, %m1 : f32
    %t2 = arith.mulf %n, %m2 : f32
    %t3 = arith.subf %t1, %t2 : f32
    %res = arith.mulf %r, %t3 : f32
    linalg.yield %res : f32
  } -> tensor<24x32xf32>
  %e_dh = tensor.empty() : tensor<16x32xf32>
  %z_dh = linalg.fill ins(%zero : f32) outs(%e_dh : tensor<16x32xf32>) -> tensor<16x32xf32>
  %dw1 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%x, %dz : tensor<24x16xf32>, tensor<24x32xf32>)
                       outs(%z_dh : tensor<16x32xf32>) -> tensor<16x32xf32>

  // ---------------- SGD
  %w1n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e_dh : tensor<16x32xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16x32xf32>
  %gamma_n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%gamma, %dgamma : tensor<32xf32>, tensor<32xf32>) outs(%e_h : tensor<32xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<32xf32>
  %beta_n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%beta, %dbeta : tensor<32xf32>, tensor<32xf32>) outs(%e_h : tensor<32xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<32xf32>
  %w2n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<32x10xf32>, tensor<32x10xf32>) outs(%e_hc : tensor<32x10xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<32x10xf32>
  %b2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<10xf32>, tensor<10xf32>) outs(%e_c : tensor<10xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<10xf32>
  return %w1n, %gamma_n, %beta_n, %w2n, %b2n, %rm_n, %rv_n, %loss
      : tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<32xf32>, tensor<32xf32>, tensor<f32>
}
