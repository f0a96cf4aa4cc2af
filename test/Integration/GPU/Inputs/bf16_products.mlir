// Products of bf16 values extended to f32 (as PyTorch's attention under
// autocast computes its scores): s = extf(x) @ extf(w) on the rows of x
// collapsed to [B*T, D], loss = sum((s - y)^2) / (B*T), the output gradient
// rounded to bf16 (autocast's gradient type), dW = extf(x)^T @ extf(ds),
// SGD on W. Both products read extensions only, through a collapse and a
// transpose: --ga-narrow-product-operands makes them bf16 x bf16 -> f32
// products. (Not a proven gradient: the corpus' steps are; this one is for
// ga-verify, which compares the lowered step with this function as written.)
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(b, t, d) -> (b, t, d)>
func.func @train_step(%w: tensor<16x8xf32>, %lr: f32 {ga.init = "uniform"},
                      %x: tensor<8x4x16xf32> {ga.batch = 0 : i64},
                      %y: tensor<8x4x8xf32> {ga.batch = 0 : i64})
    -> (tensor<16x8xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0625 : f32  // 2 / (B * T)
  %inv = arith.constant 0.03125 : f32   // 1 / (B * T)
  // bf16 copies of the input and the weight (autocast's casts)
  %e_xb = tensor.empty() : tensor<8x4x16xbf16>
  %xb = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<8x4x16xf32>) outs(%e_xb : tensor<8x4x16xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x4x16xbf16>
  %e_wb = tensor.empty() : tensor<16x8xbf16>
  %wb = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<16x8xf32>) outs(%e_wb : tensor<16x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x8xbf16>
  // their f32 extensions, the product on the collapsed rows
  %e_xf = tensor.empty() : tensor<8x4x16xf32>
  %xf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%xb : tensor<8x4x16xbf16>) outs(%e_xf : tensor<8x4x16xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %e = arith.extf %a : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<8x4x16xf32>
  %e_wf = tensor.empty() : tensor<16x8xf32>
  %wf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wb : tensor<16x8xbf16>) outs(%e_wf : tensor<16x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %e = arith.extf %a : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<16x8xf32>
  %rows = tensor.collapse_shape %xf [[0, 1], [2]] : tensor<8x4x16xf32> into tensor<32x16xf32>
  %e_s = tensor.empty() : tensor<32x8xf32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<32x8xf32>) -> tensor<32x8xf32>
  %s = linalg.matmul ins(%rows, %wf : tensor<32x16xf32>, tensor<16x8xf32>) outs(%z_s : tensor<32x8xf32>) -> tensor<32x8xf32>
  // loss and its gradient, rounded to bf16
  %yr = tensor.collapse_shape %y [[0, 1], [2]] : tensor<8x4x8xf32> into tensor<32x8xf32>
  %r = linalg.sub ins(%s, %yr : tensor<32x8xf32>, tensor<32x8xf32>) outs(%e_s : tensor<32x8xf32>) -> tensor<32x8xf32>
  %e_l = tensor.empty() : tensor<f32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [#id2, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%r : tensor<32x8xf32>) outs(%z_l : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %n = arith.addf %acc, %sq : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%e_l : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %inv : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %e_db = tensor.empty() : tensor<32x8xbf16>
  %dsb = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<32x8xf32>) outs(%e_db : tensor<32x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %g = arith.mulf %a, %scale : f32
    %t = arith.truncf %g : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32x8xbf16>
  %dsf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dsb : tensor<32x8xbf16>) outs(%e_s : tensor<32x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %e = arith.extf %a : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<32x8xf32>
  // dW = rows^T @ ds, through a transpose of the extended rows
  %e_t = tensor.empty() : tensor<16x32xf32>
  %rows_t = linalg.transpose ins(%rows : tensor<32x16xf32>) outs(%e_t : tensor<16x32xf32>) permutation = [1, 0]
  %z_w = linalg.fill ins(%zero : f32) outs(%e_wf : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dw = linalg.matmul ins(%rows_t, %dsf : tensor<16x32xf32>, tensor<32x8xf32>) outs(%z_w : tensor<16x8xf32>) -> tensor<16x8xf32>
  %w_new = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e_wf : tensor<16x8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<16x8xf32>
  return %w_new, %loss : tensor<16x8xf32>, tensor<f32>
}
