// A value kept for a later reader (lower-fuse-kept.test): h = z + b is read
// by t = h * h and again after the product p = t w, by d = p * h. With
// ga-fuse-elementwise's fuse-kept, t's loop computes h and yields it.
func.func @step(%z: tensor<2x2xf32>, %b: tensor<2xf32>, %w: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : tensor<2x2xf32>, tensor<2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %p = linalg.matmul ins(%t, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p, %h : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x2xf32>
  return %d, %h : tensor<2x2xf32>, tensor<2x2xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

// z = [[1, 2], [3, 4]], b = [1, -1], w = [[1, 0], [1, 1]]:
// h = [[2, 1], [4, 3]], t = [[4, 1], [16, 9]], p = [[5, 1], [25, 9]],
// d = [[10, 1], [100, 27]].
func.func @main() {
  %z = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %w = arith.constant dense<[[1.0, 0.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %d, %h = call @step(%z, %b, %w)
      : (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %ud = tensor.cast %d : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ud) : (tensor<*xf32>) -> ()
  %uh = tensor.cast %h : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%uh) : (tensor<*xf32>) -> ()
  return
}
