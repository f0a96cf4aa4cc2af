// One causal self-attention layer over the samples' sequences x [B, 5, 4]:
// queries x * w (a per-feature gain, the parameter), keys and values x;
// loss = sum(output) / B, its gradient through ga.attention_backward
// (grad_output 1/B), dw = sum over samples and positions of dq * x, and an
// SGD update. The attention's batch loop is d0 of its maps.
#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @train_step(%x: tensor<?x5x4xf32> {ga.batch = 0 : i64},
                      %w: tensor<4xf32>, %lr: f32)
    -> (tensor<f32>, tensor<4xf32>, tensor<?x5x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x5x4xf32>
  %bi = arith.index_cast %b : index to i64
  %bf = arith.sitofp %bi : i64 to f32
  %e = tensor.empty(%b) : tensor<?x5x4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(b, t, d) -> (b, t, d)>, affine_map<(b, t, d) -> (d)>,
                                        affine_map<(b, t, d) -> (b, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %w : tensor<?x5x4xf32>, tensor<4xf32>) outs(%e : tensor<?x5x4xf32>) {
  ^bb0(%xv: f32, %wv: f32, %o: f32):
    %p = arith.mulf %xv, %wv : f32
    linalg.yield %p : f32
  } -> tensor<?x5x4xf32>
  %out, %lse = ga.attention %q, %x, %x scale 0.5 causal indexing_maps [#q, #k, #v, #o, #l]
      : tensor<?x5x4xf32>, tensor<?x5x4xf32>, tensor<?x5x4xf32> -> tensor<?x5x4xf32>, tensor<?x5xf32>
  // loss = sum(out) / B
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%out : tensor<?x5x4xf32>) outs(%l0 : tensor<f32>) dimensions = [0, 1, 2]
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%le : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %bf : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  // d loss / d out = 1 / B
  %one = arith.constant 1.0 : f32
  %inv = arith.divf %one, %bf : f32
  %g = linalg.fill ins(%inv : f32) outs(%e : tensor<?x5x4xf32>) -> tensor<?x5x4xf32>
  %dq, %dk, %dv = ga.attention_backward %q, %x, %x, %out, %g, %lse scale 0.5 causal indexing_maps [#q, #k, #v, #o, #l]
      : tensor<?x5x4xf32>, tensor<?x5x4xf32>, tensor<?x5x4xf32>, tensor<?x5x4xf32>, tensor<?x5x4xf32>, tensor<?x5xf32>
      -> tensor<?x5x4xf32>, tensor<?x5x4xf32>, tensor<?x5x4xf32>
  // dw[d] = sum_{b, t} dq[b, t, d] * x[b, t, d]; w' = w - lr dw
  %we = tensor.empty() : tensor<4xf32>
  %w0 = linalg.fill ins(%zero : f32) outs(%we : tensor<4xf32>) -> tensor<4xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(b, t, d) -> (b, t, d)>, affine_map<(b, t, d) -> (b, t, d)>,
                                         affine_map<(b, t, d) -> (d)>],
                        iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%dq, %x : tensor<?x5x4xf32>, tensor<?x5x4xf32>) outs(%w0 : tensor<4xf32>) {
  ^bb0(%a: f32, %xv: f32, %acc: f32):
    %p = arith.mulf %a, %xv : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %w1 = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>, affine_map<(d) -> (d)>],
                        iterator_types = ["parallel"]}
      ins(%w, %dw : tensor<4xf32>, tensor<4xf32>) outs(%we : tensor<4xf32>) {
  ^bb0(%wv: f32, %gv: f32, %o: f32):
    %s = arith.mulf %lr, %gv : f32
    %u = arith.subf %wv, %s : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  return %loss, %w1, %out : tensor<f32>, tensor<4xf32>, tensor<?x5x4xf32>
}
