// Softmax regression: cross-entropy of softmax(x W) with integer labels,
// its gradient (p - onehot(label)) / B and an SGD update. The softmax is
// over the class dimension (1), per sample.
func.func @train_step(%x: tensor<?x4xf32> {ga.batch = 0 : i64},
                      %label: tensor<?xi64> {ga.batch = 0 : i64, ga.range = [0, 3]},
                      %w: tensor<4x3xf32>, %lr: f32)
    -> (tensor<f32>, tensor<4x3xf32>, tensor<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x4xf32>
  %bi = arith.index_cast %b : index to i64
  %bf = arith.sitofp %bi : i64 to f32
  %e = tensor.empty(%b) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x3xf32>)
      outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %pe = tensor.empty(%b) : tensor<?x3xf32>
  %p = linalg.softmax dimension(1) ins(%logits : tensor<?x3xf32>)
      outs(%pe : tensor<?x3xf32>) -> tensor<?x3xf32>
  // loss = -(1/B) sum_b log p[b, label[b]]
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %nll = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n)>,
                                          affine_map<(n, c) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
      ins(%p, %label : tensor<?x3xf32>, tensor<?xi64>) outs(%l0 : tensor<f32>) {
  ^bb0(%pv: f32, %l: i64, %acc: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i64
    %eq = arith.cmpi eq, %ci, %l : i64
    %lg = math.log %pv : f32
    %t = arith.select %eq, %lg, %zero : f32
    %s = arith.subf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                          iterator_types = []}
      ins(%nll : tensor<f32>) outs(%le : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %bf : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  // dlogits = (p - onehot(label)) / B
  %ge = tensor.empty(%b) : tensor<?x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n)>,
                                        affine_map<(n, c) -> (n, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p, %label : tensor<?x3xf32>, tensor<?xi64>) outs(%ge : tensor<?x3xf32>) {
  ^bb0(%pv: f32, %l: i64, %o: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i64
    %eq = arith.cmpi eq, %ci, %l : i64
    %one = arith.constant 1.0 : f32
    %oh = arith.select %eq, %one, %zero : f32
    %d = arith.subf %pv, %oh : f32
    %q = arith.divf %d, %bf : f32
    linalg.yield %q : f32
  } -> tensor<?x3xf32>
  // dW = x^T dlogits; W' = W - lr dW
  %we = tensor.empty() : tensor<4x3xf32>
  %w0 = linalg.fill ins(%zero : f32) outs(%we : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %g : tensor<?x4xf32>, tensor<?x3xf32>) outs(%w0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %wn = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                         affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : tensor<4x3xf32>, tensor<4x3xf32>) outs(%we : tensor<4x3xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %s = arith.mulf %lr, %d : f32
    %n = arith.subf %a, %s : f32
    linalg.yield %n : f32
  } -> tensor<4x3xf32>
  return %loss, %wn, %p : tensor<f32>, tensor<4x3xf32>, tensor<?x3xf32>
}
