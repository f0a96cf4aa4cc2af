// A step with per-sample values inside structured control flow: three stacked
// tanh layers applied by an scf.for whose iteration argument is per-sample,
// and an scf.if whose branches yield a per-sample value or a uniform zero
// tensor. Used by scf-regions.test.
#id = affine_map<(i, j) -> (i, j)>
func.func @train_step(%w: tensor<3x4x4xf32>, %train: i1, %x: tensor<12x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<12x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x4xf32>) -> tensor<12x4xf32>
  // Three stacked layers in a loop with a per-sample iteration argument.
  %h = scf.for %l = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<12x4xf32> {
    %wl = tensor.extract_slice %w[%l, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
    %m = linalg.matmul ins(%a, %wl : tensor<12x4xf32>, tensor<4x4xf32>) outs(%z : tensor<12x4xf32>) -> tensor<12x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<12x4xf32>) outs(%e : tensor<12x4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.tanh %v : f32
      linalg.yield %r : f32
    } -> tensor<12x4xf32>
    scf.yield %t : tensor<12x4xf32>
  }
  // Training-mode scaling in one branch, identity in the other; a uniform zero
  // tensor in a third case.
  %d = scf.if %train -> tensor<12x4xf32> {
    %two = arith.constant dense<2.0> : tensor<12x4xf32>
    %s = linalg.mul ins(%h, %two : tensor<12x4xf32>, tensor<12x4xf32>) outs(%e : tensor<12x4xf32>) -> tensor<12x4xf32>
    scf.yield %s : tensor<12x4xf32>
  } else {
    scf.yield %z : tensor<12x4xf32>
  }
  %ew = tensor.empty() : tensor<4x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<12x4xf32>, tensor<12x4xf32>) outs(%zw : tensor<4x4xf32>) -> tensor<4x4xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%d : tensor<12x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  return %dw, %s : tensor<4x4xf32>, tensor<f32>
}
