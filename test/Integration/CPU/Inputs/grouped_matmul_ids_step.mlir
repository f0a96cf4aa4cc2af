// grouped_matmul_step.mlir with group_ids: the group of each row an input
// beside the row (per-sample; ids outside [0, 4) in no group), as the trace
// gives transformers' experts after the permutation rule (_permutation.py).
// A micro-batch computes its rows with their own ids and accumulates its
// part of the weights' gradient (lib/Analysis/BatchGrouped.cpp).
func.func @train_step(%x: tensor<?x8xf32> {ga.batch = 0 : i64},
                      %w: tensor<4x8x5xf32>,
                      %ids: tensor<?xi64> {ga.batch = 0 : i64, ga.range = [-1, 5]},
                      %lr: f32)
    -> (tensor<f32>, tensor<4x8x5xf32>, tensor<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  %bi = arith.index_cast %b : index to i64
  %bf = arith.sitofp %bi : i64 to f32
  %e = tensor.empty(%b) : tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %y = ga.grouped_matmul group_ids %x, %w ends %ids into %z
      : tensor<?x8xf32>, tensor<4x8x5xf32>, tensor<?xi64> into tensor<?x5xf32>
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
  %dw = ga.grouped_matmul transpose_lhs group_ids %x, %dy ends %ids into %w0
      : tensor<?x8xf32>, tensor<?x5xf32>, tensor<?xi64> into tensor<4x8x5xf32>
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
