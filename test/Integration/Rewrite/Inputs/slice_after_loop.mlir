// A per-sample value that becomes per-sample only through a loop-carried
// argument (its init is a uniform broadcast of a parameter), then sliced
// along its non-batch dimension 0 with the batch extent taken from the loop's
// result (`tensor.dim %r, 1`). While the solver iterates, the slice may see
// its source turn per-sample before the size turns into the batch extent; the
// verdict is the one on the converged lattice, so the full slice of the batch
// dimension is exact. Batch dimension 1, dynamic batch.
#t = affine_map<(f, b) -> (f, b)>
#bc = affine_map<(f, b) -> (f)>
func.func @train_step(%x: tensor<3x?xf32> {ga.batch = 1 : i64}, %w: tensor<3xf32>, %v: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c1 : tensor<3x?xf32>
  %e = tensor.empty(%n) : tensor<3x?xf32>
  %init = linalg.broadcast ins(%w : tensor<3xf32>) outs(%e : tensor<3x?xf32>) dimensions = [1]
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %init) -> (tensor<3x?xf32>) {
    %na = tensor.dim %a, %c1 : tensor<3x?xf32>
    %ea = tensor.empty(%na) : tensor<3x?xf32>
    %s = linalg.generic {indexing_maps = [#t, #t, #t], iterator_types = ["parallel", "parallel"]}
        ins(%a, %x : tensor<3x?xf32>, tensor<3x?xf32>) outs(%ea : tensor<3x?xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %t = math.tanh %m : f32
      %u = arith.addf %t, %q : f32
      linalg.yield %u : f32
    } -> tensor<3x?xf32>
    scf.yield %s : tensor<3x?xf32>
  }
  %nr = tensor.dim %r, %c1 : tensor<3x?xf32>
  %sl = tensor.extract_slice %r[1, 0] [2, %nr] [1, 1] : tensor<3x?xf32> to tensor<2x?xf32>
  %ns = tensor.dim %sl, %c1 : tensor<2x?xf32>
  %es = tensor.empty(%ns) : tensor<2x?xf32>
  %sq = linalg.generic {indexing_maps = [#t, #t], iterator_types = ["parallel", "parallel"]}
      ins(%sl : tensor<2x?xf32>) outs(%es : tensor<2x?xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    linalg.yield %m : f32
  } -> tensor<2x?xf32>
  // The gradient of v: sum over the batch of sq[f, b] * x[g, b].
  %eg = tensor.empty() : tensor<2x3xf32>
  %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<2x3xf32>) -> tensor<2x3xf32>
  %gv = linalg.generic {indexing_maps = [affine_map<(f, g, b) -> (f, b)>, affine_map<(f, g, b) -> (g, b)>, affine_map<(f, g, b) -> (f, g)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sq, %x : tensor<2x?xf32>, tensor<3x?xf32>) outs(%zg : tensor<2x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  return %gv, %sq : tensor<2x3xf32>, tensor<2x?xf32>
}
