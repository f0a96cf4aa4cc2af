// Softmax cross-entropy of a linear classifier the way torch-mlir lowers
// F.cross_entropy(ignore_index=0, reduction='mean') and its backward:
//   - nll_loss reads the label's log-probability with tensor.extract from the
//     captured per-sample [B, C] tensor at [linalg.index 0, label];
//   - the backward compares linalg.index 1 with the label it extracts from
//     the captured per-sample labels at [linalg.index 0];
//   - the mean divides by the number of labels that are not ignored, a
//     data-only count reduced in the same linalg.generic as the
//     parameter-dependent sum of the losses.
// Returns the loss and its gradient with respect to the weights.
#id2 = affine_map<(b, c) -> (b, c)>
#row = affine_map<(b, c) -> (b)>
func.func @train_step(%w: tensor<6x5xf32>, %x: tensor<16x6xf32> {ga.batch = 0 : i64}, %y: tensor<16xi64> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ignore = arith.constant 0 : i64
  %e = tensor.empty() : tensor<16x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x5xf32>) -> tensor<16x5xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<16x6xf32>, tensor<6x5xf32>) outs(%z : tensor<16x5xf32>) -> tensor<16x5xf32>
  // log_softmax along the classes.
  %e16 = tensor.empty() : tensor<16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %m = linalg.reduce { arith.maximumf } ins(%logits : tensor<16x5xf32>) outs(%mi : tensor<16xf32>) dimensions = [1]
  %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %m : tensor<16x5xf32>, tensor<16xf32>) outs(%z16 : tensor<16xf32>) {
  ^bb0(%l: f32, %mx: f32, %acc: f32):
    %d = arith.subf %l, %mx : f32
    %ex = math.exp %d : f32
    %r = arith.addf %ex, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %logp = linalg.generic {indexing_maps = [#id2, #row, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%logits, %m, %s : tensor<16x5xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16x5xf32>) {
  ^bb0(%l: f32, %mx: f32, %sum: f32, %o: f32):
    %ls = math.log %sum : f32
    %lse = arith.addf %mx, %ls : f32
    %r = arith.subf %l, %lse : f32
    linalg.yield %r : f32
  } -> tensor<16x5xf32>
  // nll_loss forward: per-sample loss and weight (0 for ignored labels).
  %nll:2 = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> (b)>, affine_map<(b) -> (b)>], iterator_types = ["parallel"]} ins(%y : tensor<16xi64>) outs(%e16, %e16 : tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%label: i64, %o1: f32, %o2: f32):
    %b = linalg.index 0 : index
    %li = arith.index_cast %label : i64 to index
    %v = tensor.extract %logp[%b, %li] : tensor<16x5xf32>
    %n = arith.negf %v : f32
    %keep = arith.cmpi ne, %label, %ignore : i64
    %loss = arith.select %keep, %n, %zero : f32
    %wt = arith.select %keep, %one, %zero : f32
    linalg.yield %loss, %wt : f32, f32
  } -> (tensor<16xf32>, tensor<16xf32>)
  // Sum of the losses and count of the kept labels, in one reduction.
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %tot:2 = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> (b)>, affine_map<(b) -> ()>, affine_map<(b) -> ()>], iterator_types = ["reduction"]} ins(%nll#0, %nll#1 : tensor<16xf32>, tensor<16xf32>) outs(%zs, %zs : tensor<f32>, tensor<f32>) {
  ^bb0(%l: f32, %k: f32, %a: f32, %c: f32):
    %a2 = arith.addf %l, %a : f32
    %c2 = arith.addf %k, %c : f32
    linalg.yield %a2, %c2 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%tot#0, %tot#1 : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.divf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // nll_loss backward fused with log_softmax backward:
  // dlogits[b, c] = (softmax[b, c] - (c == y[b])) * keep[b] / count.
  %dl = linalg.generic {indexing_maps = [#id2, #row, affine_map<(b, c) -> ()>, #id2], iterator_types = ["parallel", "parallel"]} ins(%logp, %nll#1, %tot#1 : tensor<16x5xf32>, tensor<16xf32>, tensor<f32>) outs(%e : tensor<16x5xf32>) {
  ^bb0(%lp: f32, %k: f32, %cnt: f32, %o: f32):
    %b = linalg.index 0 : index
    %c = linalg.index 1 : index
    %label = tensor.extract %y[%b] : tensor<16xi64>
    %li = arith.index_cast %label : i64 to index
    %hit = arith.cmpi eq, %c, %li : index
    %onehot = arith.select %hit, %one, %zero : f32
    %p = math.exp %lp : f32
    %g = arith.subf %p, %onehot : f32
    %gk = arith.mulf %g, %k : f32
    %r = arith.divf %gk, %cnt : f32
    linalg.yield %r : f32
  } -> tensor<16x5xf32>
  %ew = tensor.empty() : tensor<6x5xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<6x5xf32>) -> tensor<6x5xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dl : tensor<16x6xf32>, tensor<16x5xf32>) outs(%zw : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %loss, %dw : tensor<f32>, tensor<6x5xf32>
}
