// 2-layer ReLU MLP classifier entirely in bf16 (parameters, activations, gradients, the GEMMs
// accumulate in bf16), with the softmax cross-entropy computed in f32: logits are extended with
// arith.extf, the logits gradient is rounded back with arith.truncf. SGD in bf16 (lr is an f32
// scalar rounded to bf16). The loss is an f32 0-d tensor.
// B = 24, in = 16, hidden = 32, classes = 10.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#id1 = affine_map<(i) -> (i)>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%w1: tensor<16x32xbf16>, %b1: tensor<32xbf16>,
                      %w2: tensor<32x10xbf16>, %b2: tensor<10xbf16>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<24x16xbf16> {ga.batch = 0 : i64},
                      %labels: tensor<24xi64> {ga.batch = 0 : i64, ga.range = [0, 10]})
    -> (tensor<16x32xbf16>, tensor<32xbf16>, tensor<32x10xbf16>, tensor<10xbf16>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 0.0416666679 : f32   // 1 / 24
  %zero_bf = arith.constant 0.0 : bf16
  %lr_bf = arith.truncf %lr : f32 to bf16

  // ---------------- forward (bf16)
  %e_bh = tensor.empty() : tensor<24x32xbf16>
  %z_bh = linalg.fill ins(%zero_bf : bf16) outs(%e_bh : tensor<24x32xbf16>) -> tensor<24x32xbf16>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<24x16xbf16>, tensor<16x32xbf16>)
                       outs(%z_bh : tensor<24x32xbf16>) -> tensor<24x32xbf16>
  %z1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<24x32xbf16>, tensor<32xbf16>) outs(%e_bh : tensor<24x32xbf16>) {
  ^bb0(%v: bf16, %bias: bf16, %o: bf16):
    %s = arith.addf %v, %bias : bf16
    linalg.yield %s : bf16
  } -> tensor<24x32xbf16>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z1 : tensor<24x32xbf16>) outs(%e_bh : tensor<24x32xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %r = arith.maximumf %v, %zero_bf : bf16
    linalg.yield %r : bf16
  } -> tensor<24x32xbf16>
  %e_bc = tensor.empty() : tensor<24x10xbf16>
  %z_bc = linalg.fill ins(%zero_bf : bf16) outs(%e_bc : tensor<24x10xbf16>) -> tensor<24x10xbf16>
  %aw2 = linalg.matmul ins(%a1, %w2 : tensor<24x32xbf16>, tensor<32x10xbf16>)
                       outs(%z_bc : tensor<24x10xbf16>) -> tensor<24x10xbf16>
  // logits in f32 for the loss
  %e_bc32 = tensor.empty() : tensor<24x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%aw2, %b2 : tensor<24x10xbf16>, tensor<10xbf16>) outs(%e_bc32 : tensor<24x10xf32>) {
  ^bb0(%v: bf16, %bias: bf16, %o: f32):
    %s = arith.addf %v, %bias : bf16
    %s32 = arith.extf %s : bf16 to f32
    linalg.yield %s32 : f32
  } -> tensor<24x10xf32>

  // ---------------- softmax cross-entropy (f32)
  %e_b = tensor.empty() : tensor<24xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%logits : tensor<24x10xf32>) outs(%ninf_b : tensor<24xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<24x10xf32>, tensor<24xf32>) outs(%e_bc32 : tensor<24x10xf32>) {
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<24x10xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<24x10xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<24xi64>) outs(%e_bc32 : tensor<24x10xf32>) {
  ^bb0(%lab: i64, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<24x10xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot, %logits : tensor<24x10xf32>, tensor<24x10xf32>) outs(%z_b : tensor<24xf32>) {
  ^bb0(%h: f32, %l: f32, %acc: f32):
    %p = arith.mulf %h, %l : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<24xf32>
  %nll = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%se, %mx, %picked : tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) outs(%e_b : tensor<24xf32>) {
  ^bb0(%s: f32, %m: f32, %p: f32, %o: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %m : f32
    %n = arith.subf %lse, %p : f32
    linalg.yield %n : f32
  } -> tensor<24xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%nll : tensor<24xf32>) outs(%z_s : tensor<f32>) dimensions = [0]
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---------------- backward (dlogits rounded to bf16, the rest in bf16)
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<24x10xf32>, tensor<24xf32>, tensor<24x10xf32>) outs(%e_bc : tensor<24x10xbf16>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: bf16):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    %gb = arith.truncf %g : f32 to bf16
    linalg.yield %gb : bf16
  } -> tensor<24x10xbf16>
  %e_hc = tensor.empty() : tensor<32x10xbf16>
  %z_hc = linalg.fill ins(%zero_bf : bf16) outs(%e_hc : tensor<32x10xbf16>) -> tensor<32x10xbf16>
  %dw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%a1, %dlogits : tensor<24x32xbf16>, tensor<24x10xbf16>)
                       outs(%z_hc : tensor<32x10xbf16>) -> tensor<32x10xbf16>
  %e_c = tensor.empty() : tensor<10xbf16>
  %z_c = linalg.fill ins(%zero_bf : bf16) outs(%e_c : tensor<10xbf16>) -> tensor<10xbf16>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<24x10xbf16>) outs(%z_c : tensor<10xbf16>) dimensions = [0]
  %da1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dlogits, %w2 : tensor<24x10xbf16>, tensor<32x10xbf16>)
                       outs(%z_bh : tensor<24x32xbf16>) -> tensor<24x32xbf16>
  %dz1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %z1 : tensor<24x32xbf16>, tensor<24x32xbf16>) outs(%e_bh : tensor<24x32xbf16>) {
  ^bb0(%g: bf16, %z: bf16, %o: bf16):
    %pos = arith.cmpf ogt, %z, %zero_bf : bf16
    %r = arith.select %pos, %g, %zero_bf : bf16
    linalg.yield %r : bf16
  } -> tensor<24x32xbf16>
  %e_dh = tensor.empty() : tensor<16x32xbf16>
  %z_dh = linalg.fill ins(%zero_bf : bf16) outs(%e_dh : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %dw1 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%x, %dz1 : tensor<24x16xbf16>, tensor<24x32xbf16>)
                       outs(%z_dh : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %e_h = tensor.empty() : tensor<32xbf16>
  %z_h = linalg.fill ins(%zero_bf : bf16) outs(%e_h : tensor<32xbf16>) -> tensor<32xbf16>
  %db1 = linalg.reduce { arith.addf } ins(%dz1 : tensor<24x32xbf16>) outs(%z_h : tensor<32xbf16>) dimensions = [0]

  // ---------------- SGD (bf16)
  %w1n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<16x32xbf16>, tensor<16x32xbf16>) outs(%e_dh : tensor<16x32xbf16>) {
  ^bb0(%p: bf16, %g: bf16, %o: bf16):
    %u = arith.mulf %lr_bf, %g : bf16
    %n = arith.subf %p, %u : bf16
    linalg.yield %n : bf16
  } -> tensor<16x32xbf16>
  %b1n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<32xbf16>, tensor<32xbf16>) outs(%e_h : tensor<32xbf16>) {
  ^bb0(%p: bf16, %g: bf16, %o: bf16):
    %u = arith.mulf %lr_bf, %g : bf16
    %n = arith.subf %p, %u : bf16
    linalg.yield %n : bf16
  } -> tensor<32xbf16>
  %w2n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<32x10xbf16>, tensor<32x10xbf16>) outs(%e_hc : tensor<32x10xbf16>) {
  ^bb0(%p: bf16, %g: bf16, %o: bf16):
    %u = arith.mulf %lr_bf, %g : bf16
    %n = arith.subf %p, %u : bf16
    linalg.yield %n : bf16
  } -> tensor<32x10xbf16>
  %b2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<10xbf16>, tensor<10xbf16>) outs(%e_c : tensor<10xbf16>) {
  ^bb0(%p: bf16, %g: bf16, %o: bf16):
    %u = arith.mulf %lr_bf, %g : bf16
    %n = arith.subf %p, %u : bf16
    linalg.yield %n : bf16
  } -> tensor<10xbf16>
  return %w1n, %b1n, %w2n, %b2n, %loss
      : tensor<16x32xbf16>, tensor<32xbf16>, tensor<32x10xbf16>, tensor<10xbf16>, tensor<f32>
}
