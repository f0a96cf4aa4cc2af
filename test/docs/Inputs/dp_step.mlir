// The `step.mlir` of docs/Guide.md's MPI recipe (test/docs/guide-commands.test):
// a data-parallel step small enough to check by hand. Each rank holds 16
// samples of 4 features; the gradient of w is their sum, averaged over the
// ranks with `ga.all_reduce <mean>`, then one SGD step with lr = 0.5.
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#id1 = affine_map<(i) -> (i)>
func.func @train_step(%w: tensor<4xf32>, %x: tensor<16x4xf32> {ga.batch = 0 : i64})
    -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id2, #col],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %gm = ga.all_reduce <mean> %g : tensor<4xf32>
  %w2 = linalg.generic {indexing_maps = [#id1, #id1, #id1],
                        iterator_types = ["parallel"]}
      ins(%w, %gm : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.mulf %lr, %b : f32
    %r = arith.subf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %w2 : tensor<4xf32>
}
