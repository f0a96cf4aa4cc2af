// Two data-only statistics of a padding mask, reduced in an earlier loop:
// the number of valid tokens and the number of sequences with at least one,
// combined on the host (tensor.extract, arith.divf) into the weight that
// scales every token's gradient inside the micro-batch loop (tokens per
// sequence, as some sequence-level losses normalize). Used by
// statistics-loops.test: the division reads two device buffers that are
// loaded one after the other, and moves into the kernels with both loads.
// x [B=8, T=4], mask [8, 4]; loss = sum(mask * x * w) * nseq / ntok.
func.func @train_step(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64},
                      %mask: tensor<8x4xf32> {ga.batch = 0 : i64, ga.init = "mask"})
    -> (tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %lr = arith.constant 0.1 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // ntok = sum(mask); nseq = sum_b max_t mask[b, t]
  %ntok = linalg.reduce { arith.addf } ins(%mask : tensor<8x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  %e8 = tensor.empty() : tensor<8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %any = linalg.reduce { arith.maximumf } ins(%mask : tensor<8x4xf32>) outs(%z8 : tensor<8xf32>) dimensions = [1]
  %nseq = linalg.reduce { arith.addf } ins(%any : tensor<8xf32>) outs(%zs : tensor<f32>) dimensions = [0]
  %t = tensor.extract %ntok[] : tensor<f32>
  %s = tensor.extract %nseq[] : tensor<f32>
  %tc = arith.maximumf %t, %one : f32
  %scale = arith.divf %s, %tc : f32
  // Per-token weights mask * scale, the loss and the gradient of w.
  %e84 = tensor.empty() : tensor<8x4xf32>
  %wt = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<8x4xf32>) outs(%e84 : tensor<8x4xf32>) {
  ^bb0(%k: f32, %o: f32):
    %v = arith.mulf %k, %scale : f32
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%x, %wt : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %p = arith.mulf %a, %k : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<4xf32>
  %loss = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>, affine_map<(j) -> ()>], iterator_types = ["reduction"]}
      ins(%g, %w : tensor<4xf32>, tensor<4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<f32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %u = arith.mulf %lr, %b : f32
    %n = arith.subf %a, %u : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %w2, %loss : tensor<4xf32>, tensor<f32>
}
