// bench/gpu_mlp_wide.mlir: test/Integration/Inputs/steps/mlp_sgd.mlir at a
// realistic width (generated from it by replacing the shapes): B = 256,
// in = 784, hidden = 1024, classes = 10. With 4 micro-batches, the weight
// gradients reduce over 64 samples per micro-batch (dW1 = x^T dz1 is
// 784x1024, K = 64) and the first GEMM over 784 features: the shapes where
// shared-memory tiling pays (bench/gpu_report.py, docs/GPU.md).
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#id1 = affine_map<(i) -> (i)>
#id0 = affine_map<() -> ()>
func.func @train_step(%w1: tensor<784x1024xf32>, %b1: tensor<1024xf32>,
                      %w2: tensor<1024x10xf32>, %b2: tensor<10xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<256x784xf32> {ga.batch = 0 : i64},
                      %labels: tensor<256xi64> {ga.batch = 0 : i64, ga.range = [0, 10]})
    -> (tensor<784x1024xf32>, tensor<1024xf32>, tensor<1024x10xf32>, tensor<10xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 0.00390625 : f32   // 1 / 256

  // ---------------- forward
  %e_bh = tensor.empty() : tensor<256x1024xf32>
  %z_bh = linalg.fill ins(%zero : f32) outs(%e_bh : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<256x784xf32>, tensor<784x1024xf32>)
                       outs(%z_bh : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %z1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<256x1024xf32>, tensor<1024xf32>) outs(%e_bh : tensor<256x1024xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<256x1024xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z1 : tensor<256x1024xf32>) outs(%e_bh : tensor<256x1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x1024xf32>

  %e_bc = tensor.empty() : tensor<256x10xf32>
  %z_bc = linalg.fill ins(%zero : f32) outs(%e_bc : tensor<256x10xf32>) -> tensor<256x10xf32>
  %aw2 = linalg.matmul ins(%a1, %w2 : tensor<256x1024xf32>, tensor<1024x10xf32>)
                       outs(%z_bc : tensor<256x10xf32>) -> tensor<256x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%aw2, %b2 : tensor<256x10xf32>, tensor<10xf32>) outs(%e_bc : tensor<256x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<256x10xf32>

  // softmax cross-entropy
  %e_b = tensor.empty() : tensor<256xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<256xf32>) -> tensor<256xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<256xf32>) -> tensor<256xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%logits : tensor<256x10xf32>) outs(%ninf_b : tensor<256xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<256x10xf32>, tensor<256xf32>) outs(%e_bc : tensor<256x10xf32>) {
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<256x10xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<256x10xf32>) outs(%z_b : tensor<256xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<256xi64>) outs(%e_bc : tensor<256x10xf32>) {
  ^bb0(%lab: i64, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<256x10xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot, %logits : tensor<256x10xf32>, tensor<256x10xf32>) outs(%z_b : tensor<256xf32>) {
  ^bb0(%h: f32, %l: f32, %acc: f32):
    %p = arith.mulf %h, %l : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %nll = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%se, %mx, %picked : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e_b : tensor<256xf32>) {
  ^bb0(%s: f32, %m: f32, %p: f32, %o: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %m : f32
    %n = arith.subf %lse, %p : f32
    linalg.yield %n : f32
  } -> tensor<256xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%nll : tensor<256xf32>) outs(%z_s : tensor<f32>) dimensions = [0]
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---------------- backward
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<256x10xf32>, tensor<256xf32>, tensor<256x10xf32>) outs(%e_bc : tensor<256x10xf32>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<256x10xf32>
  %e_hb = tensor.empty() : tensor<1024x256xf32>
  %a1t = linalg.transpose ins(%a1 : tensor<256x1024xf32>) outs(%e_hb : tensor<1024x256xf32>) permutation = [1, 0]
  %e_hc = tensor.empty() : tensor<1024x10xf32>
  %z_hc = linalg.fill ins(%zero : f32) outs(%e_hc : tensor<1024x10xf32>) -> tensor<1024x10xf32>
  %dw2 = linalg.matmul ins(%a1t, %dlogits : tensor<1024x256xf32>, tensor<256x10xf32>)
                       outs(%z_hc : tensor<1024x10xf32>) -> tensor<1024x10xf32>
  %e_c = tensor.empty() : tensor<10xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<256x10xf32>) outs(%z_c : tensor<10xf32>) dimensions = [0]
  %e_ch = tensor.empty() : tensor<10x1024xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<1024x10xf32>) outs(%e_ch : tensor<10x1024xf32>) permutation = [1, 0]
  %da1 = linalg.matmul ins(%dlogits, %w2t : tensor<256x10xf32>, tensor<10x1024xf32>)
                       outs(%z_bh : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %dz1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %z1 : tensor<256x1024xf32>, tensor<256x1024xf32>) outs(%e_bh : tensor<256x1024xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x1024xf32>
  %e_db = tensor.empty() : tensor<784x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x784xf32>) outs(%e_db : tensor<784x256xf32>) permutation = [1, 0]
  %e_dh = tensor.empty() : tensor<784x1024xf32>
  %z_dh = linalg.fill ins(%zero : f32) outs(%e_dh : tensor<784x1024xf32>) -> tensor<784x1024xf32>
  %dw1 = linalg.matmul ins(%xt, %dz1 : tensor<784x256xf32>, tensor<256x1024xf32>)
                       outs(%z_dh : tensor<784x1024xf32>) -> tensor<784x1024xf32>
  %e_h = tensor.empty() : tensor<1024xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<1024xf32>) -> tensor<1024xf32>
  %db1 = linalg.reduce { arith.addf } ins(%dz1 : tensor<256x1024xf32>) outs(%z_h : tensor<1024xf32>) dimensions = [0]

  // ---------------- SGD
  %w1n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<784x1024xf32>, tensor<784x1024xf32>) outs(%e_dh : tensor<784x1024xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<784x1024xf32>
  %b1n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<1024xf32>, tensor<1024xf32>) outs(%e_h : tensor<1024xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<1024xf32>
  %w2n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<1024x10xf32>, tensor<1024x10xf32>) outs(%e_hc : tensor<1024x10xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<1024x10xf32>
  %b2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<10xf32>, tensor<10xf32>) outs(%e_c : tensor<10xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<10xf32>
  return %w1n, %b1n, %w2n, %b2n, %loss
      : tensor<784x1024xf32>, tensor<1024xf32>, tensor<1024x10xf32>, tensor<10xf32>, tensor<f32>
}
