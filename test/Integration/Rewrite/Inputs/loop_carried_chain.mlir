// A chain of iteration arguments that becomes per-sample one link per
// iteration of the analysis' fixpoint (%a1 <- %x, %a2 <- %a1, %a3 <- %a2,
// %a4 <- %a3, declared in the reverse order): after five iterations %a4 holds
// tanh-layers of the samples, and everything the loop yields is per-sample.
#id = affine_map<(b, j) -> (b, j)>
func.func @train_step(%w: tensor<8x4xf32>, %v: tensor<4x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r:4 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a4 = %w, %a3 = %w, %a2 = %w, %a1 = %w) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %m = linalg.matmul ins(%a3, %v : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %a4 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
    } -> tensor<8x4xf32>
    scf.yield %t, %a2, %a1, %x : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
  %ew = tensor.empty() : tensor<4x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dv = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%r#1, %r#0 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%zw : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %dv, %r#0 : tensor<4x4xf32>, tensor<8x4xf32>
}
