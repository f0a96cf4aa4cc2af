// Masked mean (used by masked-mean-multi-result.test): a parameter-dependent
// numerator and a data-only token count
// from one multi-result reduction.
func.func @step(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %m: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x, %m, %w : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %k: f32, %b: f32, %o: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %k : f32
    %s1 = arith.addf %q, %o : f32
    %s2 = arith.addf %k, %c : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  // gradient wrt w: sum_b x[b,j] m[b,j] / count
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x, %m, %r#1 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<f32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %k: f32, %n: f32, %o: f32):
    %p = arith.mulf %a, %k : f32
    %q = arith.divf %p, %n : f32
    %s = arith.addf %q, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%r#0, %r#1 : tensor<f32>, tensor<f32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %n: f32, %o: f32):
    %q = arith.divf %a, %n : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %out = linalg.add ins(%g, %loss : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  return %out : tensor<4xf32>
}
