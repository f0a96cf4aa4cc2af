// LayerNorm + linear regression head, written with named elementwise ops (linalg.sub, linalg.mul,
// linalg.add, linalg.div, linalg.sqrt), linalg.broadcast and linalg.reduce, the way a framework
// decomposes torch.nn.LayerNorm. The statistics are per sample (over features), so unlike
// batchnorm_mlp.mlir this step has no batch coupling.
//   mu = mean_d x ; xc = x - mu ; sigma = sqrt(mean_d xc^2 + eps) ; xhat = xc / sigma
//   h = xhat * gamma + beta ; pred = h w + b ; loss = (1/B) sum_i ||pred_i - y_i||^2
//   dh = (2/B)(pred - y) w^T ; dgamma = sum_i dh xhat ; dbeta = sum_i dh ; dw = h^T dpred
// B = 24, features = 16, outputs = 4; eps = 1e-5.
#id2 = affine_map<(i, j) -> (i, j)>
#all2 = affine_map<(i, j) -> ()>
#id0 = affine_map<() -> ()>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                      %w: tensor<16x4xf32>, %b: tensor<4xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<24x16xf32> {ga.batch = 0 : i64},
                      %y: tensor<24x4xf32> {ga.batch = 0 : i64})
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %inv_d = arith.constant 0.0625 : f32          // 1 / 16
  %inv_b = arith.constant 0.0416666679 : f32    // 1 / 24
  %two_over_b = arith.constant 0.0833333358 : f32

  // ---------------- forward: LayerNorm
  %e_b = tensor.empty() : tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %e_bd = tensor.empty() : tensor<24x16xf32>
  %sum = linalg.reduce { arith.addf } ins(%x : tensor<24x16xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %sum_bd = linalg.broadcast ins(%sum : tensor<24xf32>) outs(%e_bd : tensor<24x16xf32>) dimensions = [1]
  %invd_bd = linalg.fill ins(%inv_d : f32) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %mu_bd = linalg.mul ins(%sum_bd, %invd_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %xc = linalg.sub ins(%x, %mu_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %xc2 = linalg.mul ins(%xc, %xc : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %ss = linalg.reduce { arith.addf } ins(%xc2 : tensor<24x16xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %ss_bd = linalg.broadcast ins(%ss : tensor<24xf32>) outs(%e_bd : tensor<24x16xf32>) dimensions = [1]
  %var_bd = linalg.mul ins(%ss_bd, %invd_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %eps_bd = linalg.fill ins(%eps : f32) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %ve_bd = linalg.add ins(%var_bd, %eps_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %sigma_bd = linalg.sqrt ins(%ve_bd : tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %xhat = linalg.div ins(%xc, %sigma_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %gamma_bd = linalg.broadcast ins(%gamma : tensor<16xf32>) outs(%e_bd : tensor<24x16xf32>) dimensions = [0]
  %beta_bd = linalg.broadcast ins(%beta : tensor<16xf32>) outs(%e_bd : tensor<24x16xf32>) dimensions = [0]
  %hg = linalg.mul ins(%xhat, %gamma_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %h = linalg.add ins(%hg, %beta_bd : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>

  // ---------------- forward: linear head + MSE
  %e_bo = tensor.empty() : tensor<24x4xf32>
  %z_bo = linalg.fill ins(%zero : f32) outs(%e_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %hw = linalg.matmul ins(%h, %w : tensor<24x16xf32>, tensor<16x4xf32>) outs(%z_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %b_bo = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e_bo : tensor<24x4xf32>) dimensions = [0]
  %pred = linalg.add ins(%hw, %b_bo : tensor<24x4xf32>, tensor<24x4xf32>) outs(%e_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %r = linalg.sub ins(%pred, %y : tensor<24x4xf32>, tensor<24x4xf32>) outs(%e_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %r2 = linalg.mul ins(%r, %r : tensor<24x4xf32>, tensor<24x4xf32>) outs(%e_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sse = linalg.reduce { arith.addf } ins(%r2 : tensor<24x4xf32>) outs(%z_s : tensor<f32>) dimensions = [0, 1]
  %invb_s = linalg.fill ins(%inv_b : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %loss = linalg.mul ins(%sse, %invb_s : tensor<f32>, tensor<f32>) outs(%e_s : tensor<f32>) -> tensor<f32>

  // ---------------- backward
  %tob_bo = linalg.fill ins(%two_over_b : f32) outs(%e_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %dpred = linalg.mul ins(%r, %tob_bo : tensor<24x4xf32>, tensor<24x4xf32>) outs(%e_bo : tensor<24x4xf32>) -> tensor<24x4xf32>
  %e_do = tensor.empty() : tensor<16x4xf32>
  %z_do = linalg.fill ins(%zero : f32) outs(%e_do : tensor<16x4xf32>) -> tensor<16x4xf32>
  %dw = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                      ins(%h, %dpred : tensor<24x16xf32>, tensor<24x4xf32>)
                      outs(%z_do : tensor<16x4xf32>) -> tensor<16x4xf32>
  %e_o = tensor.empty() : tensor<4xf32>
  %z_o = linalg.fill ins(%zero : f32) outs(%e_o : tensor<4xf32>) -> tensor<4xf32>
  %db = linalg.reduce { arith.addf } ins(%dpred : tensor<24x4xf32>) outs(%z_o : tensor<4xf32>) dimensions = [0]
  %z_bd = linalg.fill ins(%zero : f32) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %dh = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                      ins(%dpred, %w : tensor<24x4xf32>, tensor<16x4xf32>)
                      outs(%z_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %dhx = linalg.mul ins(%dh, %xhat : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bd : tensor<24x16xf32>) -> tensor<24x16xf32>
  %e_d = tensor.empty() : tensor<16xf32>
  %z_d = linalg.fill ins(%zero : f32) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %dgamma = linalg.reduce { arith.addf } ins(%dhx : tensor<24x16xf32>) outs(%z_d : tensor<16xf32>) dimensions = [0]
  %dbeta = linalg.reduce { arith.addf } ins(%dh : tensor<24x16xf32>) outs(%z_d : tensor<16xf32>) dimensions = [0]

  // ---------------- SGD (lr broadcast to the parameter shapes)
  %lr_d = linalg.fill ins(%lr : f32) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %ug = linalg.mul ins(%lr_d, %dgamma : tensor<16xf32>, tensor<16xf32>) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %gamma_n = linalg.sub ins(%gamma, %ug : tensor<16xf32>, tensor<16xf32>) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %ub = linalg.mul ins(%lr_d, %dbeta : tensor<16xf32>, tensor<16xf32>) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %beta_n = linalg.sub ins(%beta, %ub : tensor<16xf32>, tensor<16xf32>) outs(%e_d : tensor<16xf32>) -> tensor<16xf32>
  %lr_do = linalg.fill ins(%lr : f32) outs(%e_do : tensor<16x4xf32>) -> tensor<16x4xf32>
  %uw = linalg.mul ins(%lr_do, %dw : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e_do : tensor<16x4xf32>) -> tensor<16x4xf32>
  %w_n = linalg.sub ins(%w, %uw : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e_do : tensor<16x4xf32>) -> tensor<16x4xf32>
  %lr_o = linalg.fill ins(%lr : f32) outs(%e_o : tensor<4xf32>) -> tensor<4xf32>
  %ubb = linalg.mul ins(%lr_o, %db : tensor<4xf32>, tensor<4xf32>) outs(%e_o : tensor<4xf32>) -> tensor<4xf32>
  %b_n = linalg.sub ins(%b, %ubb : tensor<4xf32>, tensor<4xf32>) outs(%e_o : tensor<4xf32>) -> tensor<4xf32>
  return %gamma_n, %beta_n, %w_n, %b_n, %loss : tensor<16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<f32>
}
