// Regression MLP in feature-major ("column") layout: the input x is [features, B] with the
// samples along dimension 1 (ga.batch = 1) while the targets are [B] (ga.batch = 0).
//   a = tanh(w1 x + b1)        [hidden, B]
//   pred = w2^T a + b2         [B]     (linalg.vecmat)
//   loss = (1/B) sum_b (pred_b - y_b)^2
//   dw2 = a dpred (linalg.matvec, reduces over the batch) ; dz = w2 dpred^T * (1 - a^2)
//   dw1 = dz x^T (matmul with transposed rhs, reduces over the batch) ; db1 = sum over dim 1
// B = 24, features = 16, hidden = 20.
#id2 = affine_map<(h, b) -> (h, b)>
#row = affine_map<(h, b) -> (h)>
#col = affine_map<(h, b) -> (b)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%w1: tensor<20x16xf32>, %b1: tensor<20xf32>,
                      %w2: tensor<20xf32>, %b2: tensor<f32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<16x24xf32> {ga.batch = 1 : i64},
                      %y: tensor<24xf32> {ga.batch = 0 : i64})
    -> (tensor<20x16xf32>, tensor<20xf32>, tensor<20xf32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %inv_b = arith.constant 0.0416666679 : f32   // 1 / 24
  %two_over_b = arith.constant 0.0833333358 : f32   // 2 / 24

  // ---------------- forward
  %e_hb = tensor.empty() : tensor<20x24xf32>
  %z_hb = linalg.fill ins(%zero : f32) outs(%e_hb : tensor<20x24xf32>) -> tensor<20x24xf32>
  %wx = linalg.matmul ins(%w1, %x : tensor<20x16xf32>, tensor<16x24xf32>)
                      outs(%z_hb : tensor<20x24xf32>) -> tensor<20x24xf32>
  %a = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wx, %b1 : tensor<20x24xf32>, tensor<20xf32>) outs(%e_hb : tensor<20x24xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<20x24xf32>
  %e_b = tensor.empty() : tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %wa = linalg.vecmat ins(%w2, %a : tensor<20xf32>, tensor<20x24xf32>) outs(%z_b : tensor<24xf32>) -> tensor<24xf32>
  %r = linalg.generic {indexing_maps = [#id1, #all1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%wa, %b2, %y : tensor<24xf32>, tensor<f32>, tensor<24xf32>) outs(%e_b : tensor<24xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    %d = arith.subf %s, %t : f32
    linalg.yield %d : f32
  } -> tensor<24xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%r : tensor<24xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---------------- backward
  %dpred = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%r : tensor<24xf32>) outs(%e_b : tensor<24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %g = arith.mulf %v, %two_over_b : f32
    linalg.yield %g : f32
  } -> tensor<24xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dpred : tensor<24xf32>) outs(%z_s : tensor<f32>) dimensions = [0]
  %e_h = tensor.empty() : tensor<20xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<20xf32>) -> tensor<20xf32>
  %dw2 = linalg.matvec ins(%a, %dpred : tensor<20x24xf32>, tensor<24xf32>) outs(%z_h : tensor<20xf32>) -> tensor<20xf32>
  %dz = linalg.generic {indexing_maps = [#row, #col, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dpred, %a : tensor<20xf32>, tensor<24xf32>, tensor<20x24xf32>) outs(%e_hb : tensor<20x24xf32>) {
  ^bb0(%wv: f32, %dp: f32, %t: f32, %o: f32):
    %da = arith.mulf %wv, %dp : f32
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r2 = arith.mulf %da, %d : f32
    linalg.yield %r2 : f32
  } -> tensor<20x24xf32>
  %e_hd = tensor.empty() : tensor<20x16xf32>
  %z_hd = linalg.fill ins(%zero : f32) outs(%e_hd : tensor<20x16xf32>) -> tensor<20x16xf32>
  %dw1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dz, %x : tensor<20x24xf32>, tensor<16x24xf32>)
                       outs(%z_hd : tensor<20x16xf32>) -> tensor<20x16xf32>
  %db1 = linalg.reduce { arith.addf } ins(%dz : tensor<20x24xf32>) outs(%z_h : tensor<20xf32>) dimensions = [1]

  // ---------------- SGD
  %w1n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<20x16xf32>, tensor<20x16xf32>) outs(%e_hd : tensor<20x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<20x16xf32>
  %b1n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<20xf32>, tensor<20xf32>) outs(%e_h : tensor<20xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<20xf32>
  %w2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w2, %dw2 : tensor<20xf32>, tensor<20xf32>) outs(%e_h : tensor<20xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<20xf32>
  %b2n = linalg.generic {indexing_maps = [#id0, #id0, #id0], iterator_types = []}
      ins(%b2, %db2 : tensor<f32>, tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %w1n, %b1n, %w2n, %b2n, %loss : tensor<20x16xf32>, tensor<20xf32>, tensor<20xf32>, tensor<f32>, tensor<f32>
}
