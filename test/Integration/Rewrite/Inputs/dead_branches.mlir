// Branches that never run: scf.if on constant conditions, the way a frontend
// emits a training-mode switch. Dead-code analysis (loaded into the solver
// with the batch analysis) proves the other branch dead, so what it would do
// is irrelevant: here it reads one sample of a captured per-sample tensor
// (x - h[0]) and reduces over the batch inside the region, both refused where
// they run. The rewrite re-creates a dead branch as a copy of the live one.
#id = affine_map<(b, j) -> (b, j)>
func.func @train_step(%w: tensor<4x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %false = arith.constant false
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %a = scf.if %true -> tensor<8x4xf32> {
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.tanh %p : f32
      linalg.yield %s : f32
    } -> tensor<8x4xf32>
    scf.yield %t : tensor<8x4xf32>
  } else {
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %j = linalg.index 1 : index
      %f = tensor.extract %h[%c0, %j] : tensor<8x4xf32>
      %s = arith.subf %p, %f : f32
      linalg.yield %s : f32
    } -> tensor<8x4xf32>
    scf.yield %t : tensor<8x4xf32>
  }
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // A uniform scale: the dead branch would reduce the per-sample %h.
  %scale = scf.if %false -> tensor<f32> {
    %r = linalg.reduce { arith.addf } ins(%h : tensor<8x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    scf.yield %r : tensor<f32>
  } else {
    %one = arith.constant dense<0.5> : tensor<f32>
    scf.yield %one : tensor<f32>
  }
  %ew = tensor.empty() : tensor<4x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : tensor<8x4xf32>, tensor<8x4xf32>) outs(%zw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.reduce { arith.addf } ins(%a : tensor<8x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  %loss = linalg.mul ins(%s, %scale : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %dw, %loss : tensor<4x4xf32>, tensor<f32>
}
