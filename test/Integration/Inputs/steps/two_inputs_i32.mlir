// Classifier over two per-sample inputs of different ranks: an "image" [B, 4, 4] (flattened with
// tensor.collapse_shape) and side features [B, 6], concatenated along features with
// tensor.insert_slice (torch.cat), labels as i32. The two first-layer weights are concatenated
// the same way (one fused GEMM) and their gradients are split back with tensor.extract_slice.
// Metric: number of correct predictions as an i32 sum over the batch.
//   feat = [img_flat | meta] ; W1 = [w_img ; w_meta] ; h = relu(feat W1 + b1) ; logits = h w2 + b2
//   loss = mean softmax cross-entropy ; dW1 = feat^T dz ; dw_img = dW1[0:16], dw_meta = dW1[16:22]
// B = 24, image 4x4, side features 6, hidden 16, classes 5.
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#id0 = affine_map<() -> ()>
#lhs = affine_map<(m, n, k) -> (m, k)>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @train_step(%w_img: tensor<16x16xf32>, %w_meta: tensor<6x16xf32>, %b1: tensor<16xf32>,
                      %w2: tensor<16x5xf32>, %b2: tensor<5xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %img: tensor<24x4x4xf32> {ga.batch = 0 : i64},
                      %meta: tensor<24x6xf32> {ga.batch = 0 : i64},
                      %labels: tensor<24xi32> {ga.batch = 0 : i64, ga.range = [0, 5]})
    -> (tensor<16x16xf32>, tensor<6x16xf32>, tensor<16xf32>, tensor<16x5xf32>, tensor<5xf32>,
        tensor<f32>, tensor<i32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero_i = arith.constant 0 : i32
  %inv_b = arith.constant 0.0416666679 : f32   // 1 / 24

  // ---------------- forward
  %img_flat = tensor.collapse_shape %img [[0], [1, 2]] : tensor<24x4x4xf32> into tensor<24x16xf32>
  %e_feat = tensor.empty() : tensor<24x22xf32>
  %feat_a = tensor.insert_slice %img_flat into %e_feat[0, 0] [24, 16] [1, 1] : tensor<24x16xf32> into tensor<24x22xf32>
  %feat = tensor.insert_slice %meta into %feat_a[0, 16] [24, 6] [1, 1] : tensor<24x6xf32> into tensor<24x22xf32>
  %e_w1 = tensor.empty() : tensor<22x16xf32>
  %w1_a = tensor.insert_slice %w_img into %e_w1[0, 0] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<22x16xf32>
  %w1 = tensor.insert_slice %w_meta into %w1_a[16, 0] [6, 16] [1, 1] : tensor<6x16xf32> into tensor<22x16xf32>
  %e_bh = tensor.empty() : tensor<24x16xf32>
  %z_bh = linalg.fill ins(%zero : f32) outs(%e_bh : tensor<24x16xf32>) -> tensor<24x16xf32>
  %fw = linalg.matmul ins(%feat, %w1 : tensor<24x22xf32>, tensor<22x16xf32>) outs(%z_bh : tensor<24x16xf32>) -> tensor<24x16xf32>
  %z1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%fw, %b1 : tensor<24x16xf32>, tensor<16xf32>) outs(%e_bh : tensor<24x16xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x16xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z1 : tensor<24x16xf32>) outs(%e_bh : tensor<24x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x16xf32>
  %e_bc = tensor.empty() : tensor<24x5xf32>
  %z_bc = linalg.fill ins(%zero : f32) outs(%e_bc : tensor<24x5xf32>) -> tensor<24x5xf32>
  %aw2 = linalg.matmul ins(%a1, %w2 : tensor<24x16xf32>, tensor<16x5xf32>) outs(%z_bc : tensor<24x5xf32>) -> tensor<24x5xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%aw2, %b2 : tensor<24x5xf32>, tensor<5xf32>) outs(%e_bc : tensor<24x5xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x5xf32>

  // softmax cross-entropy; the class of the maximum (first maximum wins) for the metric
  %e_b = tensor.empty() : tensor<24xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %e_bi = tensor.empty() : tensor<24xi32>
  %z_bi = linalg.fill ins(%zero_i : i32) outs(%e_bi : tensor<24xi32>) -> tensor<24xi32>
  %mx, %pred = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<24x5xf32>) outs(%ninf_b, %z_bi : tensor<24xf32>, tensor<24xi32>) {
  ^bb0(%l: f32, %best: f32, %bi: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %l, %best : f32
    %nv = arith.select %gt, %l, %best : f32
    %ni = arith.select %gt, %ji, %bi : i32
    linalg.yield %nv, %ni : f32, i32
  } -> (tensor<24xf32>, tensor<24xi32>)
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<24x5xf32>, tensor<24xf32>) outs(%e_bc : tensor<24x5xf32>) {
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<24x5xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<24x5xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<24xi32>) outs(%e_bc : tensor<24x5xf32>) {
  ^bb0(%lab: i32, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %eq = arith.cmpi eq, %ji, %lab : i32
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<24x5xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot, %logits : tensor<24x5xf32>, tensor<24x5xf32>) outs(%z_b : tensor<24xf32>) {
  ^bb0(%h: f32, %l: f32, %acc: f32):
    %p = arith.mulf %h, %l : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<24xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id1, #id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%se, %mx, %picked : tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%s: f32, %m: f32, %p: f32, %acc: f32):
    %ls = math.log %s : f32
    %lse = arith.addf %ls, %m : f32
    %n = arith.subf %lse, %p : f32
    %r = arith.addf %acc, %n : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sum : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_b : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %e_si = tensor.empty() : tensor<i32>
  %z_si = linalg.fill ins(%zero_i : i32) outs(%e_si : tensor<i32>) -> tensor<i32>
  %correct = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%pred, %labels : tensor<24xi32>, tensor<24xi32>) outs(%z_si : tensor<i32>) {
  ^bb0(%p: i32, %l: i32, %acc: i32):
    %eq = arith.cmpi eq, %p, %l : i32
    %c = arith.extui %eq : i1 to i32
    %s = arith.addi %acc, %c : i32
    linalg.yield %s : i32
  } -> tensor<i32>

  // ---------------- backward
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<24x5xf32>, tensor<24xf32>, tensor<24x5xf32>) outs(%e_bc : tensor<24x5xf32>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<24x5xf32>
  %e_hc = tensor.empty() : tensor<16x5xf32>
  %z_hc = linalg.fill ins(%zero : f32) outs(%e_hc : tensor<16x5xf32>) -> tensor<16x5xf32>
  %dw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%a1, %dlogits : tensor<24x16xf32>, tensor<24x5xf32>)
                       outs(%z_hc : tensor<16x5xf32>) -> tensor<16x5xf32>
  %e_c = tensor.empty() : tensor<5xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<5xf32>) -> tensor<5xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<24x5xf32>) outs(%z_c : tensor<5xf32>) dimensions = [0]
  %da1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dlogits, %w2 : tensor<24x5xf32>, tensor<16x5xf32>)
                       outs(%z_bh : tensor<24x16xf32>) -> tensor<24x16xf32>
  %dz1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %z1 : tensor<24x16xf32>, tensor<24x16xf32>) outs(%e_bh : tensor<24x16xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x16xf32>
  %z_w1 = linalg.fill ins(%zero : f32) outs(%e_w1 : tensor<22x16xf32>) -> tensor<22x16xf32>
  %dw1 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%feat, %dz1 : tensor<24x22xf32>, tensor<24x16xf32>)
                       outs(%z_w1 : tensor<22x16xf32>) -> tensor<22x16xf32>
  %dw_img = tensor.extract_slice %dw1[0, 0] [16, 16] [1, 1] : tensor<22x16xf32> to tensor<16x16xf32>
  %dw_meta = tensor.extract_slice %dw1[16, 0] [6, 16] [1, 1] : tensor<22x16xf32> to tensor<6x16xf32>
  %e_h = tensor.empty() : tensor<16xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<16xf32>) -> tensor<16xf32>
  %db1 = linalg.reduce { arith.addf } ins(%dz1 : tensor<24x16xf32>) outs(%z_h : tensor<16xf32>) dimensions = [0]

  // ---------------- SGD
  %e_wi = tensor.empty() : tensor<16x16xf32>
  %w_img_n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w_img, %dw_img : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e_wi : tensor<16x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16x16xf32>
  %e_wm = tensor.empty() : tensor<6x16xf32>
  %w_meta_n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w_meta, %dw_meta : tensor<6x16xf32>, tensor<6x16xf32>) outs(%e_wm : tensor<6x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<6x16xf32>
  %b1n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<16xf32>, tensor<16xf32>) outs(%e_h : tensor<16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %w2n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<16x5xf32>, tensor<16x5xf32>) outs(%e_hc : tensor<16x5xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16x5xf32>
  %b2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<5xf32>, tensor<5xf32>) outs(%e_c : tensor<5xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<5xf32>
  return %w_img_n, %w_meta_n, %b1n, %w2n, %b2n, %loss, %correct
      : tensor<16x16xf32>, tensor<6x16xf32>, tensor<16xf32>, tensor<16x5xf32>, tensor<5xf32>, tensor<f32>, tensor<i32>
}
