// Accumulation chains whose init is also an input of the next reduction's
// per-sample computation (chain-init-input.test): g2 = g1 + sum_b x[b] g1.
#id2 = affine_map<(b, j) -> (b, j)>
#col = affine_map<(b, j) -> (j)>

// g1 depends on the parameter w: a coupled statistic, exact with
// recompute-statistics.
func.func @params(%w: tensor<3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> (tensor<3xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %g1 = linalg.generic {indexing_maps = [#id2, #col, #col], iterator_types = ["reduction", "parallel"]} ins(%x, %w : tensor<8x3xf32>, tensor<3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  %g2 = linalg.generic {indexing_maps = [#id2, #col, #col], iterator_types = ["reduction", "parallel"]} ins(%x, %g1 : tensor<8x3xf32>, tensor<3xf32>) outs(%g1 : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  return %g1, %g2 : tensor<3xf32>, tensor<3xf32>
}

// g1 is data-only (a sum of the samples): computed in an earlier loop by
// default.
func.func @data(%w: tensor<3xf32>, %x: tensor<?x3xf32> {ga.batch = 0 : i64}) -> (tensor<3xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %g1 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<?x3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %acc = arith.addf %a, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  %g2 = linalg.generic {indexing_maps = [#id2, #col, #col, #col], iterator_types = ["reduction", "parallel"]} ins(%x, %g1, %w : tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%g1 : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %c : f32
    %acc = arith.addf %q, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  return %g1, %g2 : tensor<3xf32>, tensor<3xf32>
}
