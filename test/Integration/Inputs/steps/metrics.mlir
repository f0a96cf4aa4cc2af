// MLP classifier step (tanh hidden layer, softmax cross-entropy, SGD) that also returns metrics:
//   correct   : number of samples whose argmax class equals the label (i64 sum over the batch),
//   max_loss  : the largest per-sample loss (max-reduction over the batch),
//   worst     : the index of that sample (a two-result argmax reduction over the batch:
//               value and index, the index taken from linalg.index; first maximum wins).
// B = 24, in = 12, hidden = 24, classes = 8.
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
func.func @train_step(%w1: tensor<12x24xf32>, %b1: tensor<24xf32>,
                      %w2: tensor<24x8xf32>, %b2: tensor<8xf32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<24x12xf32> {ga.batch = 0 : i64},
                      %labels: tensor<24xi64> {ga.batch = 0 : i64, ga.range = [0, 8]})
    -> (tensor<12x24xf32>, tensor<24xf32>, tensor<24x8xf32>, tensor<8xf32>,
        tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero_i = arith.constant 0 : i64
  %inv_b = arith.constant 0.0416666679 : f32   // 1 / 24

  // ---------------- forward
  %e_bh = tensor.empty() : tensor<24x24xf32>
  %z_bh = linalg.fill ins(%zero : f32) outs(%e_bh : tensor<24x24xf32>) -> tensor<24x24xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<24x12xf32>, tensor<12x24xf32>)
                       outs(%z_bh : tensor<24x24xf32>) -> tensor<24x24xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<24x24xf32>, tensor<24xf32>) outs(%e_bh : tensor<24x24xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<24x24xf32>
  %e_bc = tensor.empty() : tensor<24x8xf32>
  %z_bc = linalg.fill ins(%zero : f32) outs(%e_bc : tensor<24x8xf32>) -> tensor<24x8xf32>
  %aw2 = linalg.matmul ins(%a1, %w2 : tensor<24x24xf32>, tensor<24x8xf32>)
                       outs(%z_bc : tensor<24x8xf32>) -> tensor<24x8xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%aw2, %b2 : tensor<24x8xf32>, tensor<8xf32>) outs(%e_bc : tensor<24x8xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<24x8xf32>

  // softmax cross-entropy
  %e_b = tensor.empty() : tensor<24xf32>
  %ninf_b = linalg.fill ins(%ninf : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<24xf32>) -> tensor<24xf32>
  %mx = linalg.reduce { arith.maximumf } ins(%logits : tensor<24x8xf32>) outs(%ninf_b : tensor<24xf32>) dimensions = [1]
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %mx : tensor<24x8xf32>, tensor<24xf32>) outs(%e_bc : tensor<24x8xf32>) {
  ^bb0(%l: f32, %m: f32, %o: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<24x8xf32>
  %se = linalg.reduce { arith.addf } ins(%ex : tensor<24x8xf32>) outs(%z_b : tensor<24xf32>) dimensions = [1]
  %onehot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<24xi64>) outs(%e_bc : tensor<24x8xf32>) {
  ^bb0(%lab: i64, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %lab : i64
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<24x8xf32>
  %picked = linalg.generic {indexing_maps = [#id2, #id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot, %logits : tensor<24x8xf32>, tensor<24x8xf32>) outs(%z_b : tensor<24xf32>) {
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

  // ---------------- metrics
  // predicted class: argmax over classes (value, index), first maximum wins
  %e_bi = tensor.empty() : tensor<24xi64>
  %z_bi = linalg.fill ins(%zero_i : i64) outs(%e_bi : tensor<24xi64>) -> tensor<24xi64>
  %amax_v, %pred = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<24x8xf32>) outs(%ninf_b, %z_bi : tensor<24xf32>, tensor<24xi64>) {
  ^bb0(%l: f32, %best: f32, %bi: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %l, %best : f32
    %nv = arith.select %gt, %l, %best : f32
    %ni = arith.select %gt, %ji, %bi : i64
    linalg.yield %nv, %ni : f32, i64
  } -> (tensor<24xf32>, tensor<24xi64>)
  %e_si = tensor.empty() : tensor<i64>
  %z_si = linalg.fill ins(%zero_i : i64) outs(%e_si : tensor<i64>) -> tensor<i64>
  %correct = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%pred, %labels : tensor<24xi64>, tensor<24xi64>) outs(%z_si : tensor<i64>) {
  ^bb0(%p: i64, %l: i64, %acc: i64):
    %eq = arith.cmpi eq, %p, %l : i64
    %c = arith.extui %eq : i1 to i64
    %s = arith.addi %acc, %c : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %ninf_s = linalg.fill ins(%ninf : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %max_loss = linalg.reduce { arith.maximumf } ins(%nll : tensor<24xf32>) outs(%ninf_s : tensor<f32>) dimensions = [0]
  %worst_v, %worst = linalg.generic {indexing_maps = [#id1, #all1, #all1], iterator_types = ["reduction"]}
      ins(%nll : tensor<24xf32>) outs(%ninf_s, %z_si : tensor<f32>, tensor<i64>) {
  ^bb0(%l: f32, %best: f32, %bi: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %gt = arith.cmpf ogt, %l, %best : f32
    %nv = arith.select %gt, %l, %best : f32
    %ni = arith.select %gt, %ii, %bi : i64
    linalg.yield %nv, %ni : f32, i64
  } -> (tensor<f32>, tensor<i64>)

  // ---------------- backward
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %se, %onehot : tensor<24x8xf32>, tensor<24xf32>, tensor<24x8xf32>) outs(%e_bc : tensor<24x8xf32>) {
  ^bb0(%e: f32, %s: f32, %h: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %h : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<24x8xf32>
  %e_hc = tensor.empty() : tensor<24x8xf32>
  %z_hc = linalg.fill ins(%zero : f32) outs(%e_hc : tensor<24x8xf32>) -> tensor<24x8xf32>
  %dw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%a1, %dlogits : tensor<24x24xf32>, tensor<24x8xf32>)
                       outs(%z_hc : tensor<24x8xf32>) -> tensor<24x8xf32>
  %e_c = tensor.empty() : tensor<8xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<8xf32>) -> tensor<8xf32>
  %db2 = linalg.reduce { arith.addf } ins(%dlogits : tensor<24x8xf32>) outs(%z_c : tensor<8xf32>) dimensions = [0]
  %da1 = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out]
                       ins(%dlogits, %w2 : tensor<24x8xf32>, tensor<24x8xf32>)
                       outs(%z_bh : tensor<24x24xf32>) -> tensor<24x24xf32>
  %dz1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%da1, %a1 : tensor<24x24xf32>, tensor<24x24xf32>) outs(%e_bh : tensor<24x24xf32>) {
  ^bb0(%g: f32, %t: f32, %o: f32):
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<24x24xf32>
  %e_dh = tensor.empty() : tensor<12x24xf32>
  %z_dh = linalg.fill ins(%zero : f32) outs(%e_dh : tensor<12x24xf32>) -> tensor<12x24xf32>
  %dw1 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
                       ins(%x, %dz1 : tensor<24x12xf32>, tensor<24x24xf32>)
                       outs(%z_dh : tensor<12x24xf32>) -> tensor<12x24xf32>
  %e_h = tensor.empty() : tensor<24xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<24xf32>) -> tensor<24xf32>
  %db1 = linalg.reduce { arith.addf } ins(%dz1 : tensor<24x24xf32>) outs(%z_h : tensor<24xf32>) dimensions = [0]

  // ---------------- SGD
  %w1n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %dw1 : tensor<12x24xf32>, tensor<12x24xf32>) outs(%e_dh : tensor<12x24xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<12x24xf32>
  %b1n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %db1 : tensor<24xf32>, tensor<24xf32>) outs(%e_h : tensor<24xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<24xf32>
  %w2n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %dw2 : tensor<24x8xf32>, tensor<24x8xf32>) outs(%e_hc : tensor<24x8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<24x8xf32>
  %b2n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %db2 : tensor<8xf32>, tensor<8xf32>) outs(%e_c : tensor<8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %w1n, %b1n, %w2n, %b2n, %loss, %correct, %max_loss, %worst
      : tensor<12x24xf32>, tensor<24xf32>, tensor<24x8xf32>, tensor<8xf32>,
        tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>
}
