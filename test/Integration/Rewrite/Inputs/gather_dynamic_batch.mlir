// Used by gather-forms.test.
// Dynamic batch gather, labels as operand and captured logits.
func.func @step(%w: tensor<4x5xf32>, %x: tensor<?x4xf32> {ga.batch = 0 : i64}, %y: tensor<?xi64> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%b) : tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x5xf32>) outs(%z : tensor<?x5xf32>) -> tensor<?x5xf32>
  %eb = tensor.empty(%b) : tensor<?xf32>
  %nll = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y : tensor<?xi64>) outs(%eb : tensor<?xf32>) {
  ^bb0(%l: i64, %o: f32):
    %i = linalg.index 0 : index
    %li = arith.index_cast %l : i64 to index
    %v = tensor.extract %logits[%i, %li] : tensor<?x5xf32>
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<?xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%nll : tensor<?xf32>) outs(%zs : tensor<f32>) dimensions = [0]
  return %s : tensor<f32>
}
