// Used by gather-forms.test.
// Token-level gather: [B, T] tokens collapsed to [B*T] (factor T), logits
// [B*T, V] captured and read at the token's row.
func.func @step(%w: tensor<4x5xf32>, %x: tensor<6x3x4xf32> {ga.batch = 0 : i64}, %y: tensor<6x3xi64> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %xc = tensor.collapse_shape %x [[0, 1], [2]] : tensor<6x3x4xf32> into tensor<18x4xf32>
  %yc = tensor.collapse_shape %y [[0, 1]] : tensor<6x3xi64> into tensor<18xi64>
  %e = tensor.empty() : tensor<18x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<18x5xf32>) -> tensor<18x5xf32>
  %logits = linalg.matmul ins(%xc, %w : tensor<18x4xf32>, tensor<4x5xf32>) outs(%z : tensor<18x5xf32>) -> tensor<18x5xf32>
  %e18 = tensor.empty() : tensor<18xf32>
  %nll = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%yc : tensor<18xi64>) outs(%e18 : tensor<18xf32>) {
  ^bb0(%l: i64, %o: f32):
    %i = linalg.index 0 : index
    %li = arith.index_cast %l : i64 to index
    %v = tensor.extract %logits[%i, %li] : tensor<18x5xf32>
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %m = arith.mulf %v, %f : f32
    linalg.yield %m : f32
  } -> tensor<18xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%nll : tensor<18xf32>) outs(%zs : tensor<f32>) dimensions = [0]
  return %s : tensor<f32>
}
