// Used by gather-forms.test.
// nll fused with the sum: the gather is in a reduction over the batch; the
// logits are [C, B] (batch in dimension 1).
func.func @step(%w: tensor<5x4xf32>, %x: tensor<4x8xf32> {ga.batch = 1 : i64}, %y: tensor<8xi64> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5x8xf32>) -> tensor<5x8xf32>
  %logits = linalg.matmul ins(%w, %x : tensor<5x4xf32>, tensor<4x8xf32>) outs(%z : tensor<5x8xf32>) -> tensor<5x8xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%y : tensor<8xi64>) outs(%zs : tensor<f32>) {
  ^bb0(%l: i64, %o: f32):
    %i = linalg.index 0 : index
    %li = arith.index_cast %l : i64 to index
    %v = tensor.extract %logits[%li, %i] : tensor<5x8xf32>
    %r = arith.subf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
