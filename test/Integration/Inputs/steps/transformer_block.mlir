// One pre-LayerNorm transformer block on x [B, T, D] with a regression (MSE) loss, a full
// hand-derived backward, and SGD:
//   h1 = LN1(x)                                   (over D, gamma/beta, eps = 1e-5)
//   q, k, v = h1 wq, h1 wk, h1 wv                 (on [B*T, D] via tensor.collapse_shape)
//   s = q k^T / sqrt(D), causal mask (-inf above the diagonal), p = softmax over keys
//   x1 = x + (p v) wo                             (scores/values: linalg.batch_matmul)
//   h2 = LN2(x1) ; x2 = x1 + gelu_tanh(h2 w1 + b1) w2 + b2
//   loss = sum((x2 - y)^2) / (B*T*D)
// Backward: MLP, LN2 (dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))), residual,
// output projection, attention (dP = dA V^T, dV = P^T dA, dS = P (dP - rowsum(dP P)) / sqrt(D),
// dQ = dS K, dK = dS^T Q), QKV projections (dh1 accumulated by three matmuls into one C),
// LN1 gamma/beta. Weight gradients reduce over the collapsed [B*T] rows.
// B = 8, T = 6, D = 16, MLP hidden = 32.
#id2 = affine_map<(n, d) -> (n, d)>
#row = affine_map<(n, d) -> (n)>
#col = affine_map<(n, d) -> (d)>
#all2 = affine_map<(n, d) -> ()>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#bi3 = affine_map<(b, i, j) -> (b, i)>
#id1 = affine_map<(i) -> (i)>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#blhs = affine_map<(b, m, n, k) -> (b, m, k)>
#blhs_t = affine_map<(b, m, n, k) -> (b, k, m)>
#brhs_t = affine_map<(b, m, n, k) -> (b, n, k)>
#brhs = affine_map<(b, m, n, k) -> (b, k, n)>
#bout = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @train_step(%ln1_g: tensor<16xf32>, %ln1_b: tensor<16xf32>,
                      %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>,
                      %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>,
                      %ln2_g: tensor<16xf32>, %ln2_b: tensor<16xf32>,
                      %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x16xf32>, %b2: tensor<16xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<8x6x16xf32> {ga.batch = 0 : i64},
                      %y: tensor<8x6x16xf32> {ga.batch = 0 : i64})
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
        tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %three = arith.constant 3.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.0e-5 : f32
  %inv_d = arith.constant 0.0625 : f32            // 1 / D
  %scale = arith.constant 0.25 : f32              // 1 / sqrt(D)
  %gelu_c = arith.constant 0.797884583 : f32      // sqrt(2 / pi)
  %gelu_k = arith.constant 0.044715 : f32
  %inv_n = arith.constant 0.00130208337 : f32     // 1 / (B*T*D) = 1 / 768
  %two_inv_n = arith.constant 0.00260416674 : f32 // 2 / 768

  %e_nd = tensor.empty() : tensor<48x16xf32>
  %z_nd = linalg.fill ins(%zero : f32) outs(%e_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %e_n = tensor.empty() : tensor<48xf32>
  %z_n = linalg.fill ins(%zero : f32) outs(%e_n : tensor<48xf32>) -> tensor<48xf32>
  %e_d = tensor.empty() : tensor<16xf32>
  %z_d = linalg.fill ins(%zero : f32) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %e_dd = tensor.empty() : tensor<16x16xf32>
  %z_dd = linalg.fill ins(%zero : f32) outs(%e_dd : tensor<16x16xf32>) -> tensor<16x16xf32>

  // ================= forward
  %xf = tensor.collapse_shape %x [[0, 1], [2]] : tensor<8x6x16xf32> into tensor<48x16xf32>
  %yf = tensor.collapse_shape %y [[0, 1], [2]] : tensor<8x6x16xf32> into tensor<48x16xf32>

  // ---- LN1
  %sum1 = linalg.reduce { arith.addf } ins(%xf : tensor<48x16xf32>) outs(%z_n : tensor<48xf32>) dimensions = [1]
  %xc1 = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xf, %sum1 : tensor<48x16xf32>, tensor<48xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %mu = arith.mulf %s, %inv_d : f32
    %c = arith.subf %v, %mu : f32
    linalg.yield %c : f32
  } -> tensor<48x16xf32>
  %var1 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc1 : tensor<48x16xf32>) outs(%z_n : tensor<48xf32>) {
  ^bb0(%c: f32, %acc: f32):
    %c2 = arith.mulf %c, %c : f32
    %s = arith.addf %acc, %c2 : f32
    linalg.yield %s : f32
  } -> tensor<48xf32>
  %rstd1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%var1 : tensor<48xf32>) outs(%e_n : tensor<48xf32>) {
  ^bb0(%s: f32, %o: f32):
    %var = arith.mulf %s, %inv_d : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<48xf32>
  %xhat1 = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xc1, %rstd1 : tensor<48x16xf32>, tensor<48xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%c: f32, %r: f32, %o: f32):
    %xh = arith.mulf %c, %r : f32
    linalg.yield %xh : f32
  } -> tensor<48x16xf32>
  %h1 = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xhat1, %ln1_g, %ln1_b : tensor<48x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%xh: f32, %g: f32, %bb: f32, %o: f32):
    %s = arith.mulf %xh, %g : f32
    %h = arith.addf %s, %bb : f32
    linalg.yield %h : f32
  } -> tensor<48x16xf32>

  // ---- self-attention
  %q = linalg.matmul ins(%h1, %wq : tensor<48x16xf32>, tensor<16x16xf32>) outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %k = linalg.matmul ins(%h1, %wk : tensor<48x16xf32>, tensor<16x16xf32>) outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %v = linalg.matmul ins(%h1, %wv : tensor<48x16xf32>, tensor<16x16xf32>) outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %q3 = tensor.expand_shape %q [[0, 1], [2]] output_shape [8, 6, 16] : tensor<48x16xf32> into tensor<8x6x16xf32>
  %k3 = tensor.expand_shape %k [[0, 1], [2]] output_shape [8, 6, 16] : tensor<48x16xf32> into tensor<8x6x16xf32>
  %v3 = tensor.expand_shape %v [[0, 1], [2]] output_shape [8, 6, 16] : tensor<48x16xf32> into tensor<8x6x16xf32>
  %e_bdt = tensor.empty() : tensor<8x16x6xf32>
  %kt = linalg.transpose ins(%k3 : tensor<8x6x16xf32>) outs(%e_bdt : tensor<8x16x6xf32>) permutation = [0, 2, 1]
  %e_btt = tensor.empty() : tensor<8x6x6xf32>
  %z_btt = linalg.fill ins(%zero : f32) outs(%e_btt : tensor<8x6x6xf32>) -> tensor<8x6x6xf32>
  %s = linalg.batch_matmul ins(%q3, %kt : tensor<8x6x16xf32>, tensor<8x16x6xf32>)
                           outs(%z_btt : tensor<8x6x6xf32>) -> tensor<8x6x6xf32>
  %sm = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<8x6x6xf32>) outs(%e_btt : tensor<8x6x6xf32>) {
  ^bb0(%sv: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %sc = arith.mulf %sv, %scale : f32
    %r = arith.select %keep, %sc, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x6x6xf32>
  %e_bt = tensor.empty() : tensor<8x6xf32>
  %ninf_bt = linalg.fill ins(%ninf : f32) outs(%e_bt : tensor<8x6xf32>) -> tensor<8x6xf32>
  %z_bt = linalg.fill ins(%zero : f32) outs(%e_bt : tensor<8x6xf32>) -> tensor<8x6xf32>
  %smax = linalg.reduce { arith.maximumf } ins(%sm : tensor<8x6x6xf32>) outs(%ninf_bt : tensor<8x6xf32>) dimensions = [2]
  %pe = linalg.generic {indexing_maps = [#id3, #bi3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sm, %smax : tensor<8x6x6xf32>, tensor<8x6xf32>) outs(%e_btt : tensor<8x6x6xf32>) {
  ^bb0(%sv: f32, %mx: f32, %o: f32):
    %d = arith.subf %sv, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<8x6x6xf32>
  %psum = linalg.reduce { arith.addf } ins(%pe : tensor<8x6x6xf32>) outs(%z_bt : tensor<8x6xf32>) dimensions = [2]
  %p = linalg.generic {indexing_maps = [#id3, #bi3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pe, %psum : tensor<8x6x6xf32>, tensor<8x6xf32>) outs(%e_btt : tensor<8x6x6xf32>) {
  ^bb0(%e: f32, %sum: f32, %o: f32):
    %r = arith.divf %e, %sum : f32
    linalg.yield %r : f32
  } -> tensor<8x6x6xf32>
  %e_btd = tensor.empty() : tensor<8x6x16xf32>
  %z_btd = linalg.fill ins(%zero : f32) outs(%e_btd : tensor<8x6x16xf32>) -> tensor<8x6x16xf32>
  %att3 = linalg.batch_matmul ins(%p, %v3 : tensor<8x6x6xf32>, tensor<8x6x16xf32>)
                              outs(%z_btd : tensor<8x6x16xf32>) -> tensor<8x6x16xf32>
  %att = tensor.collapse_shape %att3 [[0, 1], [2]] : tensor<8x6x16xf32> into tensor<48x16xf32>
  %ao = linalg.matmul ins(%att, %wo : tensor<48x16xf32>, tensor<16x16xf32>) outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %x1 = linalg.add ins(%xf, %ao : tensor<48x16xf32>, tensor<48x16xf32>) outs(%e_nd : tensor<48x16xf32>) -> tensor<48x16xf32>

  // ---- LN2
  %sum2 = linalg.reduce { arith.addf } ins(%x1 : tensor<48x16xf32>) outs(%z_n : tensor<48xf32>) dimensions = [1]
  %xc2 = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %sum2 : tensor<48x16xf32>, tensor<48xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%vv: f32, %sv: f32, %o: f32):
    %mu = arith.mulf %sv, %inv_d : f32
    %c = arith.subf %vv, %mu : f32
    linalg.yield %c : f32
  } -> tensor<48x16xf32>
  %var2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xc2 : tensor<48x16xf32>) outs(%z_n : tensor<48xf32>) {
  ^bb0(%c: f32, %acc: f32):
    %c2 = arith.mulf %c, %c : f32
    %sv = arith.addf %acc, %c2 : f32
    linalg.yield %sv : f32
  } -> tensor<48xf32>
  %rstd2 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%var2 : tensor<48xf32>) outs(%e_n : tensor<48xf32>) {
  ^bb0(%sv: f32, %o: f32):
    %var = arith.mulf %sv, %inv_d : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<48xf32>
  %xhat2 = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xc2, %rstd2 : tensor<48x16xf32>, tensor<48xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%c: f32, %r: f32, %o: f32):
    %xh = arith.mulf %c, %r : f32
    linalg.yield %xh : f32
  } -> tensor<48x16xf32>
  %h2 = linalg.generic {indexing_maps = [#id2, #col, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xhat2, %ln2_g, %ln2_b : tensor<48x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%xh: f32, %g: f32, %bb: f32, %o: f32):
    %sc = arith.mulf %xh, %g : f32
    %h = arith.addf %sc, %bb : f32
    linalg.yield %h : f32
  } -> tensor<48x16xf32>

  // ---- GELU MLP
  %e_nf = tensor.empty() : tensor<48x32xf32>
  %z_nf = linalg.fill ins(%zero : f32) outs(%e_nf : tensor<48x32xf32>) -> tensor<48x32xf32>
  %hw1 = linalg.matmul ins(%h2, %w1 : tensor<48x16xf32>, tensor<16x32xf32>) outs(%z_nf : tensor<48x32xf32>) -> tensor<48x32xf32>
  %u = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw1, %b1 : tensor<48x32xf32>, tensor<32xf32>) outs(%e_nf : tensor<48x32xf32>) {
  ^bb0(%vv: f32, %bb: f32, %o: f32):
    %r = arith.addf %vv, %bb : f32
    linalg.yield %r : f32
  } -> tensor<48x32xf32>
  %gu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<48x32xf32>) outs(%e_nf : tensor<48x32xf32>) {
  ^bb0(%uu: f32, %o: f32):
    %u2 = arith.mulf %uu, %uu : f32
    %u3 = arith.mulf %u2, %uu : f32
    %ku3 = arith.mulf %gelu_k, %u3 : f32
    %in = arith.addf %uu, %ku3 : f32
    %arg = arith.mulf %gelu_c, %in : f32
    %t = math.tanh %arg : f32
    %onept = arith.addf %one, %t : f32
    %hu = arith.mulf %half, %uu : f32
    %r = arith.mulf %hu, %onept : f32
    linalg.yield %r : f32
  } -> tensor<48x32xf32>
  %mo = linalg.matmul ins(%gu, %w2 : tensor<48x32xf32>, tensor<32x16xf32>) outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %x2 = linalg.generic {indexing_maps = [#id2, #id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %mo, %b2 : tensor<48x16xf32>, tensor<48x16xf32>, tensor<16xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%a: f32, %m: f32, %bb: f32, %o: f32):
    %t = arith.addf %m, %bb : f32
    %r = arith.addf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<48x16xf32>

  // ---- loss
  %res = linalg.sub ins(%x2, %yf : tensor<48x16xf32>, tensor<48x16xf32>) outs(%e_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%res : tensor<48x16xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%r: f32, %acc: f32):
    %r2 = arith.mulf %r, %r : f32
    %sv = arith.addf %acc, %r2 : f32
    linalg.yield %sv : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%sv: f32, %o: f32):
    %l = arith.mulf %sv, %inv_n : f32
    linalg.yield %l : f32
  } -> tensor<f32>

  // ================= backward
  %dx2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%res : tensor<48x16xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%r: f32, %o: f32):
    %g = arith.mulf %r, %two_inv_n : f32
    linalg.yield %g : f32
  } -> tensor<48x16xf32>

  // ---- MLP
  %e_fd = tensor.empty() : tensor<32x16xf32>
  %z_fd = linalg.fill ins(%zero : f32) outs(%e_fd : tensor<32x16xf32>) -> tensor<32x16xf32>
  %dw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%gu, %dx2 : tensor<48x32xf32>, tensor<48x16xf32>)
                       outs(%z_fd : tensor<32x16xf32>) -> tensor<32x16xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dx2 : tensor<48x16xf32>) outs(%z_d : tensor<16xf32>) dimensions = [0]
  %dgu = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dx2, %w2 : tensor<48x16xf32>, tensor<32x16xf32>)
                       outs(%z_nf : tensor<48x32xf32>) -> tensor<48x32xf32>
  %du = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dgu, %u : tensor<48x32xf32>, tensor<48x32xf32>) outs(%e_nf : tensor<48x32xf32>) {
  ^bb0(%g: f32, %uu: f32, %o: f32):
    // gelu'(u) = 0.5 (1 + t) + 0.5 u (1 - t^2) c (1 + 3 k u^2),  t = tanh(c (u + k u^3))
    %u2 = arith.mulf %uu, %uu : f32
    %u3 = arith.mulf %u2, %uu : f32
    %ku3 = arith.mulf %gelu_k, %u3 : f32
    %in = arith.addf %uu, %ku3 : f32
    %arg = arith.mulf %gelu_c, %in : f32
    %t = math.tanh %arg : f32
    %onept = arith.addf %one, %t : f32
    %left = arith.mulf %half, %onept : f32
    %t2 = arith.mulf %t, %t : f32
    %sech2 = arith.subf %one, %t2 : f32
    %k3c = arith.mulf %three, %gelu_k : f32
    %k3u2 = arith.mulf %k3c, %u2 : f32
    %dinner = arith.addf %one, %k3u2 : f32
    %cd = arith.mulf %gelu_c, %dinner : f32
    %hu = arith.mulf %half, %uu : f32
    %r1 = arith.mulf %hu, %sech2 : f32
    %right = arith.mulf %r1, %cd : f32
    %dg = arith.addf %left, %right : f32
    %r = arith.mulf %g, %dg : f32
    linalg.yield %r : f32
  } -> tensor<48x32xf32>
  %e_df = tensor.empty() : tensor<16x32xf32>
  %z_df = linalg.fill ins(%zero : f32) outs(%e_df : tensor<16x32xf32>) -> tensor<16x32xf32>
  %dw1 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%h2, %du : tensor<48x16xf32>, tensor<48x32xf32>)
                       outs(%z_df : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e_f = tensor.empty() : tensor<32xf32>
  %z_f = linalg.fill ins(%zero : f32) outs(%e_f : tensor<32xf32>) -> tensor<32xf32>
  %db1 = linalg.reduce { arith.addf } ins(%du : tensor<48x32xf32>) outs(%z_f : tensor<32xf32>) dimensions = [0]
  %dh2 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%du, %w1 : tensor<48x32xf32>, tensor<16x32xf32>)
                       outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>

  // ---- LN2
  %dln2_g = linalg.generic {indexing_maps = [#id2, #id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dh2, %xhat2 : tensor<48x16xf32>, tensor<48x16xf32>) outs(%z_d : tensor<16xf32>) {
  ^bb0(%g: f32, %xh: f32, %acc: f32):
    %pr = arith.mulf %g, %xh : f32
    %sv = arith.addf %acc, %pr : f32
    linalg.yield %sv : f32
  } -> tensor<16xf32>
  %dln2_b = linalg.reduce { arith.addf } ins(%dh2 : tensor<48x16xf32>) outs(%z_d : tensor<16xf32>) dimensions = [0]
  %dxh2 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dh2, %ln2_g : tensor<48x16xf32>, tensor<16xf32>) outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%g: f32, %gm: f32, %o: f32):
    %r = arith.mulf %g, %gm : f32
    linalg.yield %r : f32
  } -> tensor<48x16xf32>
  %sd2, %sdx2 = linalg.generic {indexing_maps = [#id2, #id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dxh2, %xhat2 : tensor<48x16xf32>, tensor<48x16xf32>) outs(%z_n, %z_n : tensor<48xf32>, tensor<48xf32>) {
  ^bb0(%g: f32, %xh: f32, %acc1: f32, %acc2: f32):
    %s1 = arith.addf %acc1, %g : f32
    %pr = arith.mulf %g, %xh : f32
    %s2 = arith.addf %acc2, %pr : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<48xf32>, tensor<48xf32>)
  // dx1 = dx2 (residual) + rstd2 * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
  %dx1 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #row, #row, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dx2, %dxh2, %xhat2, %rstd2, %sd2, %sdx2
          : tensor<48x16xf32>, tensor<48x16xf32>, tensor<48x16xf32>, tensor<48xf32>, tensor<48xf32>, tensor<48xf32>)
      outs(%e_nd : tensor<48x16xf32>) {
  ^bb0(%gres: f32, %g: f32, %xh: f32, %r: f32, %s1: f32, %s2: f32, %o: f32):
    %m1 = arith.mulf %s1, %inv_d : f32
    %m2 = arith.mulf %s2, %inv_d : f32
    %a = arith.subf %g, %m1 : f32
    %xm = arith.mulf %xh, %m2 : f32
    %bsub = arith.subf %a, %xm : f32
    %dln = arith.mulf %r, %bsub : f32
    %tot = arith.addf %gres, %dln : f32
    linalg.yield %tot : f32
  } -> tensor<48x16xf32>

  // ---- attention output projection
  %dwo = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%att, %dx1 : tensor<48x16xf32>, tensor<48x16xf32>)
                       outs(%z_dd : tensor<16x16xf32>) -> tensor<16x16xf32>
  %datt = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                        ins(%dx1, %wo : tensor<48x16xf32>, tensor<16x16xf32>)
                        outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %datt3 = tensor.expand_shape %datt [[0, 1], [2]] output_shape [8, 6, 16] : tensor<48x16xf32> into tensor<8x6x16xf32>

  // ---- attention
  // dP = dA V^T ; dV = P^T dA
  %dp = linalg.batch_matmul indexing_maps = [#blhs, #brhs_t, #bout]
                            ins(%datt3, %v3 : tensor<8x6x16xf32>, tensor<8x6x16xf32>)
                            outs(%z_btt : tensor<8x6x6xf32>) -> tensor<8x6x6xf32>
  %dv3 = linalg.batch_matmul indexing_maps = [#blhs_t, #brhs, #bout]
                             ins(%p, %datt3 : tensor<8x6x6xf32>, tensor<8x6x16xf32>)
                             outs(%z_btd : tensor<8x6x16xf32>) -> tensor<8x6x16xf32>
  // softmax backward, then the 1/sqrt(D) scale (masked entries have p = 0)
  %rowdot = linalg.generic {indexing_maps = [#id3, #id3, #bi3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dp, %p : tensor<8x6x6xf32>, tensor<8x6x6xf32>) outs(%z_bt : tensor<8x6xf32>) {
  ^bb0(%g: f32, %pp: f32, %acc: f32):
    %pr = arith.mulf %g, %pp : f32
    %sv = arith.addf %acc, %pr : f32
    linalg.yield %sv : f32
  } -> tensor<8x6xf32>
  %ds = linalg.generic {indexing_maps = [#id3, #id3, #bi3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dp, %p, %rowdot : tensor<8x6x6xf32>, tensor<8x6x6xf32>, tensor<8x6xf32>) outs(%e_btt : tensor<8x6x6xf32>) {
  ^bb0(%g: f32, %pp: f32, %rd: f32, %o: f32):
    %d = arith.subf %g, %rd : f32
    %pd = arith.mulf %pp, %d : f32
    %r = arith.mulf %pd, %scale : f32
    linalg.yield %r : f32
  } -> tensor<8x6x6xf32>
  // dQ = dS K ; dK = dS^T Q
  %dq3 = linalg.batch_matmul ins(%ds, %k3 : tensor<8x6x6xf32>, tensor<8x6x16xf32>)
                             outs(%z_btd : tensor<8x6x16xf32>) -> tensor<8x6x16xf32>
  %dk3 = linalg.batch_matmul indexing_maps = [#blhs_t, #brhs, #bout]
                             ins(%ds, %q3 : tensor<8x6x6xf32>, tensor<8x6x16xf32>)
                             outs(%z_btd : tensor<8x6x16xf32>) -> tensor<8x6x16xf32>
  %dq = tensor.collapse_shape %dq3 [[0, 1], [2]] : tensor<8x6x16xf32> into tensor<48x16xf32>
  %dk = tensor.collapse_shape %dk3 [[0, 1], [2]] : tensor<8x6x16xf32> into tensor<48x16xf32>
  %dv = tensor.collapse_shape %dv3 [[0, 1], [2]] : tensor<8x6x16xf32> into tensor<48x16xf32>

  // ---- QKV projections
  %dwq = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%h1, %dq : tensor<48x16xf32>, tensor<48x16xf32>)
                       outs(%z_dd : tensor<16x16xf32>) -> tensor<16x16xf32>
  %dwk = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%h1, %dk : tensor<48x16xf32>, tensor<48x16xf32>)
                       outs(%z_dd : tensor<16x16xf32>) -> tensor<16x16xf32>
  %dwv = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%h1, %dv : tensor<48x16xf32>, tensor<48x16xf32>)
                       outs(%z_dd : tensor<16x16xf32>) -> tensor<16x16xf32>
  %dh1_q = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                         ins(%dq, %wq : tensor<48x16xf32>, tensor<16x16xf32>)
                         outs(%z_nd : tensor<48x16xf32>) -> tensor<48x16xf32>
  %dh1_qk = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                          ins(%dk, %wk : tensor<48x16xf32>, tensor<16x16xf32>)
                          outs(%dh1_q : tensor<48x16xf32>) -> tensor<48x16xf32>
  %dh1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dv, %wv : tensor<48x16xf32>, tensor<16x16xf32>)
                       outs(%dh1_qk : tensor<48x16xf32>) -> tensor<48x16xf32>

  // ---- LN1 gamma / beta (x is data: no input gradient needed)
  %dln1_g = linalg.generic {indexing_maps = [#id2, #id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dh1, %xhat1 : tensor<48x16xf32>, tensor<48x16xf32>) outs(%z_d : tensor<16xf32>) {
  ^bb0(%g: f32, %xh: f32, %acc: f32):
    %pr = arith.mulf %g, %xh : f32
    %sv = arith.addf %acc, %pr : f32
    linalg.yield %sv : f32
  } -> tensor<16xf32>
  %dln1_b = linalg.reduce { arith.addf } ins(%dh1 : tensor<48x16xf32>) outs(%z_d : tensor<16xf32>) dimensions = [0]

  // ================= SGD
  %e_ln1_gn = tensor.empty() : tensor<16xf32>
  %ln1_gn = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%ln1_g, %dln1_g : tensor<16xf32>, tensor<16xf32>) outs(%e_ln1_gn : tensor<16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16xf32>
  %e_ln1_bn = tensor.empty() : tensor<16xf32>
  %ln1_bn = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%ln1_b, %dln1_b : tensor<16xf32>, tensor<16xf32>) outs(%e_ln1_bn : tensor<16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16xf32>
  %e_wqn = tensor.empty() : tensor<16x16xf32>
  %wqn = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wq, %dwq : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e_wqn : tensor<16x16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16x16xf32>
  %e_wkn = tensor.empty() : tensor<16x16xf32>
  %wkn = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wk, %dwk : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e_wkn : tensor<16x16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16x16xf32>
  %e_wvn = tensor.empty() : tensor<16x16xf32>
  %wvn = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wv, %dwv : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e_wvn : tensor<16x16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16x16xf32>
  %e_won = tensor.empty() : tensor<16x16xf32>
  %won = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wo, %dwo : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e_won : tensor<16x16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16x16xf32>
  %e_ln2_gn = tensor.empty() : tensor<16xf32>
  %ln2_gn = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%ln2_g, %dln2_g : tensor<16xf32>, tensor<16xf32>) outs(%e_ln2_gn : tensor<16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16xf32>
  %e_ln2_bn = tensor.empty() : tensor<16xf32>
  %ln2_bn = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%ln2_b, %dln2_b : tensor<16xf32>, tensor<16xf32>) outs(%e_ln2_bn : tensor<16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16xf32>
  %e_w1n = tensor.empty() : tensor<16x32xf32>
  %w1n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e_w1n : tensor<16x32xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16x32xf32>
  %e_b1n = tensor.empty() : tensor<32xf32>
  %b1n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<32xf32>, tensor<32xf32>) outs(%e_b1n : tensor<32xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<32xf32>
  %e_w2n = tensor.empty() : tensor<32x16xf32>
  %w2n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<32x16xf32>, tensor<32x16xf32>) outs(%e_w2n : tensor<32x16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<32x16xf32>
  %e_b2n = tensor.empty() : tensor<16xf32>
  %b2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<16xf32>, tensor<16xf32>) outs(%e_b2n : tensor<16xf32>) {
  ^bb0(%pv: f32, %g: f32, %o: f32):
    %up = arith.mulf %lr, %g : f32
    %nv = arith.subf %pv, %up : f32
    linalg.yield %nv : f32
  } -> tensor<16xf32>
  return %ln1_gn, %ln1_bn, %wqn, %wkn, %wvn, %won, %ln2_gn, %ln2_bn, %w1n, %b1n, %w2n, %b2n, %loss
      : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<f32>
}
