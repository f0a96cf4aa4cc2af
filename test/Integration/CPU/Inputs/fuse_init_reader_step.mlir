// ga-fuzz seed 7 cases 386, 4094, 5873, reduced: %t multiplies the matrix
// product %p by tanh(%p) in place (its payload reads its outs operand), and
// %u contracts %t over k with a loop j that %t's map drops. Fusing %t into %u
// (upstream linalg-fuse-elementwise-ops does it once %t has a single use, as
// after canonicalize or --ga-accumulate) repeats the in-place update per j.
func.func @train_step(%x: tensor<?x3xf32> {ga.batch = 0 : i64},
                      %label: tensor<?xi64> {ga.batch = 0 : i64, ga.range = [0, 3]},
                      %mask: tensor<?xf32> {ga.batch = 0 : i64, ga.init = "mask"},
                      %w0: tensor<3x6xf32>, %w1: tensor<6x3xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%b) : tensor<6x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x?xf32>) -> tensor<6x?xf32>
  %p = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%w0, %x : tensor<3x6xf32>, tensor<?x3xf32>) outs(%z : tensor<6x?xf32>) -> tensor<6x?xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<6x?xf32>) outs(%p : tensor<6x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %o, %h : f32
    linalg.yield %m : f32
  } -> tensor<6x?xf32>
  %bt = tensor.dim %t, %c1 : tensor<6x?xf32>
  %e1 = tensor.empty(%bt) : tensor<?x3xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x3xf32>) -> tensor<?x3xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(j, k, n) -> (k, n)>, affine_map<(j, k, n) -> (k, j)>,
                                        affine_map<(j, k, n) -> (n, j)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%t, %w1 : tensor<6x?xf32>, tensor<6x3xf32>) outs(%z1 : tensor<?x3xf32>) {
  ^bb0(%a: f32, %w: f32, %acc: f32):
    %m = arith.mulf %a, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  // A cross-entropy-like pick of the label's column, weighted by the mask.
  %picked = linalg.generic {indexing_maps = [affine_map<(c, n) -> (n, c)>, affine_map<(c, n) -> (n)>,
                                             affine_map<(c, n) -> (n)>],
                            iterator_types = ["reduction", "parallel"]}
      ins(%u, %label : tensor<?x3xf32>, tensor<?xi64>) outs(%mask : tensor<?xf32>) {
  ^bb0(%a: f32, %l: i64, %acc: f32):
    %c = linalg.index 0 : index
    %ci = arith.index_cast %c : index to i64
    %eq = arith.cmpi eq, %ci, %l : i64
    %s = arith.select %eq, %a, %zero : f32
    %d = arith.subf %acc, %s : f32
    linalg.yield %d : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty() : tensor<f32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> (n)>, affine_map<(n) -> ()>],
                          iterator_types = ["reduction"]}
      ins(%mask, %picked : tensor<?xf32>, tensor<?xf32>) outs(%z2 : tensor<f32>) {
  ^bb0(%m: f32, %v: f32, %acc: f32):
    %p1 = arith.mulf %m, %v : f32
    %s = arith.addf %acc, %p1 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
