// Uniform batch-shaped tensors (per-sample weights from a hyper-parameter
// table) whose producer reads its operand through a map that is not the
// identity on the batch loop (uniform-producer-maps.test). The rewrite may
// recompute such a tensor per micro-batch only when every operand is sliced
// exactly by the micro-batch; otherwise it slices the full-batch tensor.
#id1 = affine_map<(b) -> (b)>
#id2 = affine_map<(b, j) -> (b, j)>
#row = affine_map<(b, j) -> (b)>
#col = affine_map<(b, j) -> (j)>

// Two augmented views share one weight: w[b] = table[b floordiv 2].
func.func @compound(%table: tensor<?xf32>, %x: tensor<?x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%b) : tensor<?xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(b) -> (b floordiv 2)>, #id1], iterator_types = ["parallel"]} ins(%table : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%t: f32, %o: f32):
    %s = arith.mulf %t, %t : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %g = linalg.generic {indexing_maps = [#id2, #row, #col], iterator_types = ["reduction", "parallel"]} ins(%x, %w : tensor<?x3xf32>, tensor<?xf32>) outs(%z3 : tensor<3xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %p = arith.mulf %a, %s : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// A flipped positional table: w[b] = table[7 - b].
func.func @reversed(%table: tensor<8xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(b) -> (7 - b)>, #id1], iterator_types = ["parallel"]} ins(%table : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%t: f32, %o: f32):
    %s = arith.addf %t, %t : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %g = linalg.generic {indexing_maps = [#id2, #row, #col], iterator_types = ["reduction", "parallel"]} ins(%x, %w : tensor<8x3xf32>, tensor<8xf32>) outs(%z3 : tensor<3xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %p = arith.mulf %a, %s : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// The diagonal of a matrix: w[b] = m[b, b].
func.func @diagonal(%m: tensor<?x?xf32>, %x: tensor<?x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%b) : tensor<?xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(b) -> (b, b)>, #id1], iterator_types = ["parallel"]} ins(%m : tensor<?x?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%t: f32, %o: f32):
    %s = arith.mulf %t, %t : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %g = linalg.generic {indexing_maps = [#id2, #row, #col], iterator_types = ["reduction", "parallel"]} ins(%x, %w : tensor<?x3xf32>, tensor<?xf32>) outs(%z3 : tensor<3xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %p = arith.mulf %a, %s : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  return %g : tensor<3xf32>
}
