// The forward of a mixture-of-experts layer whose rows are per-sample in
// order (one row per sample) and whose group ends are an input (any values:
// the op clamps them): y = grouped product of x by w, its loss the sum of
// y^2 over the batch size, the weights' gradient (the grouped product with
// transpose_lhs of x and dy = 2 y / B) and an SGD update. A micro-batch
// computes its rows with the ends shifted by its first row, and accumulates
// its part of the weights' gradient (lib/Analysis/BatchGrouped.cpp).
func.func @train_step(%x: tensor<?x8xf32> {ga.batch = 0 : i64},
                      %w: tensor<4x8x5xf32>,
                      %ends: tensor<4xi32> {ga.range = [0, 24]}, %lr: f32)
    -> (tensor<f32>, tensor<4x8x5xf32>, tensor<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  %bi = arith.index_cast %b : index to i64
  %bf = arith.sitofp %bi : i64 to f32
  %e = tensor.empty(%b) : tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %y = ga.grouped_matmul %x, %w ends %ends into %z
      : tensor<?x8xf32>, tensor<4x8x5xf32>, tensor<4xi32> into tensor<?x5xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> ()>],
                        iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<?x5xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                          iterator_types = []}
      ins(%sq : tensor<f32>) outs(%le : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %bf : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  %dy = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %v : f32
    %d = arith.divf %t, %bf : f32
    linalg.yield %d : f32
  } -> tensor<?x5xf32>
  %we = tensor.empty() : tensor<4x8x5xf32>
  %w0 = linalg.fill ins(%zero : f32) outs(%we : tensor<4x8x5xf32>) -> tensor<4x8x5xf32>
  %dw = ga.grouped_matmul transpose_lhs %x, %dy ends %ends into %w0
      : tensor<?x8xf32>, tensor<?x5xf32>, tensor<4xi32> into tensor<4x8x5xf32>
  %wn = linalg.generic {indexing_maps = [affine_map<(g, i, j) -> (g, i, j)>, affine_map<(g, i, j) -> (g, i, j)>,
                                         affine_map<(g, i, j) -> (g, i, j)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w, %dw : tensor<4x8x5xf32>, tensor<4x8x5xf32>) outs(%we : tensor<4x8x5xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %s = arith.mulf %lr, %d : f32
    %n = arith.subf %a, %s : f32
    linalg.yield %n : f32
  } -> tensor<4x8x5xf32>
  return %loss, %wn, %y : tensor<f32>, tensor<4x8x5xf32>, tensor<?x5xf32>
}
