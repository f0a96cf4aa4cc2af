// Used by one-hot-captured-labels.test: the one-hot with a dynamic batch.
func.func @train_step(%w: tensor<4x5xf32>, %x: tensor<?x4xf32> {ga.batch = 0 : i64}, %y: tensor<?xi64> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?xi64>
  %e = tensor.empty(%n) : tensor<?x5xf32>
  %oh = linalg.generic {indexing_maps = [affine_map<(b, c) -> (b, c)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x5xf32>) {
  ^bb0(%o: f32):
    %b = linalg.index 0 : index
    %c = linalg.index 1 : index
    %l = tensor.extract %y[%b] : tensor<?xi64>
    %li = arith.index_cast %l : i64 to index
    %hit = arith.cmpi eq, %c, %li : index
    %bi = arith.index_cast %b : index to i64
    %bf = arith.sitofp %bi : i64 to f32
    %v = arith.select %hit, %one, %bf : f32
    linalg.yield %v : f32
  } -> tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x5xf32>) outs(%z : tensor<?x5xf32>) -> tensor<?x5xf32>
  %d = linalg.sub ins(%logits, %oh : tensor<?x5xf32>, tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%d : tensor<?x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  %ew = tensor.empty() : tensor<4x5xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x5xf32>) -> tensor<4x5xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<?x4xf32>, tensor<?x5xf32>) outs(%zw : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %s, %dw : tensor<f32>, tensor<4x5xf32>
}
