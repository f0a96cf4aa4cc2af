// 2-layer MLP classifier (ReLU, softmax cross-entropy on integer labels), SGD with momentum.
// Same model as mlp_sgd.mlir; the weight gradients use linalg.matmul with transposed
// indexing_maps (dw = x^T dy as one op, no linalg.transpose). Hyper-parameters are 0-d tensors,
// the optimizer is one two-result linalg.generic per parameter (new param, new velocity).
// B = 24, in = 16, hidden = 32, classes = 10.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#s2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#s1 = affine_map<(i) -> ()>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x10xf32>, %b2: tensor<10xf32>,
                      %v_w1: tensor<16x32xf32>, %v_b1: tensor<32xf32>,
                      %v_w2: tensor<32x10xf32>, %v_b2: tensor<10xf32>,
                      %lr: tensor<f32> {ga.init = "uniform"},
                      %mu: tensor<f32> {ga.init = "uniform"},
                      %x: tensor<24x16xf32> {ga.batch = 0 : i64},
                      %labels: tensor<24xi64> {ga.batch = 0 : i64, ga.range = [0, 10]})
    -> (tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 0.0416666679 : f32   // 1 / 24

  // ---------------- forward
  %e_bh = tensor.empty() : tensor<24x32xf32>
  %z_bh = linalg.fill ins(%zero : f32) outs(%e_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<24x16xf32>, tensor<16x32xf32>)
                       outs(%z_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %z1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<24x32xf32>, tensor<32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x32xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z1 : tensor<24x32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x32xf32>

  %e_bc = tensor.empty() : tensor<24x10xf32>
  %z_bc = linalg.fill ins(%zero : f32) outs(%e_bc : tensor<24x10xf32>) -> tensor<24x10xf32>
  %aw2 = linalg.matmul ins(%a1, %w2 : tensor<24x32xf32>, tensor<32x10xf32>)
                       outs(%z_bc : tensor<24x10xf32>) -> tensor<24x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%aw2, %b2 : tensor<24x10xf32>, tensor<10xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x10xf32>

  // softmax cross-entropy
  %e_b = tensor.empty() : tensor<24xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%logits : tensor<24x10xf32>) outs(%ninf_b : tensor<24xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<24x10xf32>, tensor<24xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<24x10xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<24x10xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<24xi64>) outs(%e_bc : tensor<24x10xf32>) {
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

  // ---------------- backward
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<24x10xf32>, tensor<24xf32>, tensor<24x10xf32>) outs(%e_bc : tensor<24x10xf32>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<24x10xf32>
  %e_hc = tensor.empty() : tensor<32x10xf32>
  %z_hc = linalg.fill ins(%zero : f32) outs(%e_hc : tensor<32x10xf32>) -> tensor<32x10xf32>
  %dw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%a1, %dlogits : tensor<24x32xf32>, tensor<24x10xf32>)
                       outs(%z_hc : tensor<32x10xf32>) -> tensor<32x10xf32>
  %e_c = tensor.empty() : tensor<10xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<24x10xf32>) outs(%z_c : tensor<10xf32>) dimensions = [0]
  %da1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dlogits, %w2 : tensor<24x10xf32>, tensor<32x10xf32>)
                       outs(%z_bh : tensor<24x32xf32>) -> tensor<24x32xf32>
  %dz1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %z1 : tensor<24x32xf32>, tensor<24x32xf32>) outs(%e_bh : tensor<24x32xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x32xf32>
  %e_dh = tensor.empty() : tensor<16x32xf32>
  %z_dh = linalg.fill ins(%zero : f32) outs(%e_dh : tensor<16x32xf32>) -> tensor<16x32xf32>
  %dw1 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%x, %dz1 : tensor<24x16xf32>, tensor<24x32xf32>)
                       outs(%z_dh : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e_h = tensor.empty() : tensor<32xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<32xf32>) -> tensor<32xf32>
  %db1 = linalg.reduce { arith.addf } ins(%dz1 : tensor<24x32xf32>) outs(%z_h : tensor<32xf32>) dimensions = [0]

  // ---------------- SGD with momentum (PyTorch convention): v = mu v + g ; p = p - lr v
  %e_w1n = tensor.empty() : tensor<16x32xf32>
  %e_vw1n = tensor.empty() : tensor<16x32xf32>
  %w1n, %vw1n = linalg.generic {indexing_maps = [#id2, #id2, #id2, #s2, #s2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1, %v_w1, %lr, %mu : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<f32>, tensor<f32>)
      outs(%e_w1n, %e_vw1n : tensor<16x32xf32>, tensor<16x32xf32>) {
  ^bb0(%p: f32, %g: f32, %v: f32, %l: f32, %m: f32, %o1: f32, %o2: f32):
    %mv = arith.mulf %m, %v : f32
    %vn = arith.addf %mv, %g : f32
    %u = arith.mulf %l, %vn : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %vn : f32, f32
  } -> (tensor<16x32xf32>, tensor<16x32xf32>)
  %e_b1n = tensor.empty() : tensor<32xf32>
  %e_vb1n = tensor.empty() : tensor<32xf32>
  %b1n, %vb1n = linalg.generic {indexing_maps = [#id1, #id1, #id1, #s1, #s1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1, %v_b1, %lr, %mu : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>)
      outs(%e_b1n, %e_vb1n : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%p: f32, %g: f32, %v: f32, %l: f32, %m: f32, %o1: f32, %o2: f32):
    %mv = arith.mulf %m, %v : f32
    %vn = arith.addf %mv, %g : f32
    %u = arith.mulf %l, %vn : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %vn : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  %e_w2n = tensor.empty() : tensor<32x10xf32>
  %e_vw2n = tensor.empty() : tensor<32x10xf32>
  %w2n, %vw2n = linalg.generic {indexing_maps = [#id2, #id2, #id2, #s2, #s2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2, %v_w2, %lr, %mu : tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x10xf32>, tensor<f32>, tensor<f32>)
      outs(%e_w2n, %e_vw2n : tensor<32x10xf32>, tensor<32x10xf32>) {
  ^bb0(%p: f32, %g: f32, %v: f32, %l: f32, %m: f32, %o1: f32, %o2: f32):
    %mv = arith.mulf %m, %v : f32
    %vn = arith.addf %mv, %g : f32
    %u = arith.mulf %l, %vn : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %vn : f32, f32
  } -> (tensor<32x10xf32>, tensor<32x10xf32>)
  %e_b2n = tensor.empty() : tensor<10xf32>
  %e_vb2n = tensor.empty() : tensor<10xf32>
  %b2n, %vb2n = linalg.generic {indexing_maps = [#id1, #id1, #id1, #s1, #s1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2, %v_b2, %lr, %mu : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<f32>, tensor<f32>)
      outs(%e_b2n, %e_vb2n : tensor<10xf32>, tensor<10xf32>) {
  ^bb0(%p: f32, %g: f32, %v: f32, %l: f32, %m: f32, %o1: f32, %o2: f32):
    %mv = arith.mulf %m, %v : f32
    %vn = arith.addf %mv, %g : f32
    %u = arith.mulf %l, %vn : f32
    %pn = arith.subf %p, %u : f32
    linalg.yield %pn, %vn : f32, f32
  } -> (tensor<10xf32>, tensor<10xf32>)
  return %w1n, %b1n, %w2n, %b2n, %vw1n, %vb1n, %vw2n, %vb2n, %loss
      : tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>,
        tensor<16x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>, tensor<f32>
}
