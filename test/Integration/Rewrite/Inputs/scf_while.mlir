// Per-sample values carried through an scf.while: a uniform counter decides
// how many tanh layers are applied (three), the per-sample activation is
// carried in the before region's arguments and forwarded by scf.condition to
// the after region and the results. The data-flow framework joins them
// through RegionBranchOpInterface; the rewrite re-creates the loop at
// micro-batch size.
#id = affine_map<(b, j) -> (b, j)>
func.func @train_step(%w: tensor<4x4xf32>, %x: tensor<10x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<10x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<10x4xf32>) -> tensor<10x4xf32>
  %r:2 = scf.while (%k = %c0, %a = %x) : (index, tensor<10x4xf32>) -> (index, tensor<10x4xf32>) {
    %more = arith.cmpi ult, %k, %c3 : index
    scf.condition(%more) %k, %a : index, tensor<10x4xf32>
  } do {
  ^bb0(%kk: index, %b: tensor<10x4xf32>):
    %m = linalg.matmul ins(%b, %w : tensor<10x4xf32>, tensor<4x4xf32>) outs(%z : tensor<10x4xf32>) -> tensor<10x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<10x4xf32>) outs(%e : tensor<10x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.tanh %p : f32
      linalg.yield %s : f32
    } -> tensor<10x4xf32>
    %next = arith.addi %kk, %c1 : index
    scf.yield %next, %t : index, tensor<10x4xf32>
  }
  %ew = tensor.empty() : tensor<4x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %r#1 : tensor<10x4xf32>, tensor<10x4xf32>) outs(%zw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%r#1 : tensor<10x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  return %dw, %s : tensor<4x4xf32>, tensor<f32>
}
