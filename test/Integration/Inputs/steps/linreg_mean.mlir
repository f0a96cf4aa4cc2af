// Smallest training step: linear regression, MSE averaged over the batch, SGD.
//   pred = x w + b ; loss = (1/B) sum_i (pred_i - y_i)^2
//   dpred = 2 (pred - y) / B ; dw = x^T dpred ; db = sum_i dpred_i
// B = 12, features = 8.
func.func @train_step(%w: tensor<8xf32>, %b: tensor<f32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<12x8xf32> {ga.batch = 0 : i64},
                      %y: tensor<12xf32> {ga.batch = 0 : i64})
    -> (tensor<8xf32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %two_over_b = arith.constant 0.166666672 : f32   // 2 / 12
  %inv_b = arith.constant 0.0833333358 : f32       // 1 / 12

  // ---- forward
  %e_b = tensor.empty() : tensor<12xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<12xf32>) -> tensor<12xf32>
  %xw = linalg.matvec ins(%x, %w : tensor<12x8xf32>, tensor<8xf32>) outs(%z_b : tensor<12xf32>) -> tensor<12xf32>
  // r = xw + b - y
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%xw, %b, %y : tensor<12xf32>, tensor<f32>, tensor<12xf32>) outs(%e_b : tensor<12xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    %d = arith.subf %s, %t : f32
    linalg.yield %d : f32
  } -> tensor<12xf32>
  // sum of squares over the batch
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%r : tensor<12xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %n = arith.addf %acc, %sq : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---- backward
  %dpred = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%r : tensor<12xf32>) outs(%e_b : tensor<12xf32>) {
  ^bb0(%a: f32, %o: f32):
    %g = arith.mulf %a, %two_over_b : f32
    linalg.yield %g : f32
  } -> tensor<12xf32>
  %e_w = tensor.empty() : tensor<8xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<8xf32>) -> tensor<8xf32>
  %dw = linalg.vecmat ins(%dpred, %x : tensor<12xf32>, tensor<12x8xf32>) outs(%z_w : tensor<8xf32>) -> tensor<8xf32>
  %db = linalg.reduce { arith.addf } ins(%dpred : tensor<12xf32>) outs(%z_s : tensor<f32>) dimensions = [0]

  // ---- SGD
  %w_new = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w, %dw : tensor<8xf32>, tensor<8xf32>) outs(%e_w : tensor<8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %b_new = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%b, %db : tensor<f32>, tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %w_new, %b_new, %loss : tensor<8xf32>, tensor<f32>, tensor<f32>
}
