// Linear regression + SGD on a batch whose size is only known at run time.
//   n = float(tensor.dim %x, 0)      (tensor.dim -> arith.index_cast -> arith.sitofp)
//   loss = (1/n) sum_i (x_i . w + b - y_i)^2 ; dpred = 2 r / n ; dw = x^T dpred ; db = sum dpred
// A micro-batch rewrite must use the FULL batch size for n, and the micro size for shapes.
// features = 16, B dynamic (the numerical test uses B = 22).
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#id0 = affine_map<() -> ()>
func.func @train_step(%w: tensor<16xf32>, %b: tensor<f32>,
                      %lr: f32 {ga.init = "uniform"},
                      %x: tensor<?x16xf32> {ga.batch = 0 : i64},
                      %y: tensor<?xf32> {ga.batch = 0 : i64})
    -> (tensor<16xf32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %nb = tensor.dim %x, %c0 : tensor<?x16xf32>
  %nb_i = arith.index_cast %nb : index to i64
  %n = arith.sitofp %nb_i : i64 to f32

  // ---------------- forward
  %e_b = tensor.empty(%nb) : tensor<?xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<?xf32>) -> tensor<?xf32>
  %xw = linalg.matvec ins(%x, %w : tensor<?x16xf32>, tensor<16xf32>) outs(%z_b : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id1, #all1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%xw, %b, %y : tensor<?xf32>, tensor<f32>, tensor<?xf32>) outs(%e_b : tensor<?xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    %d = arith.subf %s, %t : f32
    linalg.yield %d : f32
  } -> tensor<?xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%r : tensor<?xf32>) outs(%z_s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---------------- backward
  %dpred = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%r : tensor<?xf32>) outs(%e_b : tensor<?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %two : f32
    %g = arith.divf %t, %n : f32
    linalg.yield %g : f32
  } -> tensor<?xf32>
  %e_w = tensor.empty() : tensor<16xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<16xf32>) -> tensor<16xf32>
  %dw = linalg.vecmat ins(%dpred, %x : tensor<?xf32>, tensor<?x16xf32>) outs(%z_w : tensor<16xf32>) -> tensor<16xf32>
  %db = linalg.reduce { arith.addf } ins(%dpred : tensor<?xf32>) outs(%z_s : tensor<f32>) dimensions = [0]

  // ---------------- SGD
  %w_n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %dw : tensor<16xf32>, tensor<16xf32>) outs(%e_w : tensor<16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %nw = arith.subf %p, %u : f32
    linalg.yield %nw : f32
  } -> tensor<16xf32>
  %b_n = linalg.generic {indexing_maps = [#id0, #id0, #id0], iterator_types = []}
      ins(%b, %db : tensor<f32>, tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %nw = arith.subf %p, %u : f32
    linalg.yield %nw : f32
  } -> tensor<f32>
  return %w_n, %b_n, %loss : tensor<16xf32>, tensor<f32>, tensor<f32>
}
