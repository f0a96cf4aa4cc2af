// Six iteration arguments rotated through an scf.for: only %a0 starts
// per-sample, and each iteration passes the per-sample value one argument
// further (%a1 <- %a0, ..., %a5 <- %a4). The last argument becomes per-sample
// after six links, more than the three iterations the hand-written fixpoint
// once allowed; the data-flow solver iterates until nothing changes. The body
// also steers a layer with an scf.if on the induction variable.
#id = affine_map<(b, j) -> (b, j)>
func.func @train_step(%w: tensor<8x4xf32>, %v: tensor<4x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r:6 = scf.for %i = %c0 to %c7 step %c1 iter_args(%a0 = %x, %a1 = %w, %a2 = %w, %a3 = %w, %a4 = %w, %a5 = %w)
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %m = linalg.matmul ins(%a0, %v : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    %early = arith.cmpi ult, %i, %c3 : index
    %n = scf.if %early -> tensor<8x4xf32> {
      %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %a5 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %s = arith.addf %p, %q : f32
        %r = math.tanh %s : f32
        linalg.yield %r : f32
      } -> tensor<8x4xf32>
      scf.yield %t : tensor<8x4xf32>
    } else {
      %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%p: f32, %o: f32):
        %r = math.tanh %p : f32
        linalg.yield %r : f32
      } -> tensor<8x4xf32>
      scf.yield %t : tensor<8x4xf32>
    }
    scf.yield %n, %a0, %a1, %a2, %a3, %a4 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
  %ew = tensor.empty() : tensor<4x4xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x4xf32>) -> tensor<4x4xf32>
  %dv = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%r#5, %r#0 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%zw : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %dv, %r#5 : tensor<4x4xf32>, tensor<8x4xf32>
}
