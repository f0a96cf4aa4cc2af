// A data-only token count and a parameter-dependent masked sum out of one
// multi-result reduction (used by count-and-sum.test): the count normalizes
// per-sample weights, so it is reduced in an earlier loop, by default.
func.func @train_step(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %m: tensor<8xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> ()>, affine_map<(b, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %m, %w : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %k: f32, %b: f32, %o: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %k : f32
    %s1 = arith.addf %q, %o : f32
    %s2 = arith.addf %k, %c : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  // Per-sample weights m / count, then the gradient sum_b x[b, j] m[b] / count.
  %e8 = tensor.empty() : tensor<8xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>, affine_map<(b) -> (b)>], iterator_types = ["parallel"]} ins(%m, %r#1 : tensor<8xf32>, tensor<f32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%k: f32, %n: f32, %o: f32):
    %d = arith.divf %k, %n : f32
    %dw = arith.mulf %d, %zero : f32
    %s = arith.addf %d, %dw : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x, %scaled, %w : tensor<8x4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %s : f32
    %q = arith.mulf %p, %b : f32
    %acc = arith.addf %q, %o : f32
    linalg.yield %acc : f32
  } -> tensor<4xf32>
  %loss = linalg.div ins(%r#0, %r#1 : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss, %g : tensor<f32>, tensor<4xf32>
}
