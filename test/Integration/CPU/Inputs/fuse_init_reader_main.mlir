// Upstream linalg-fuse-elementwise-ops (MLIR 22) miscompiles @step: see
// lower-fuse-init-reader.test. y = init * x: the producer reads its init.
// z[i] = sum_k y[i] * w[k]: the consumer has a loop k that y's map drops.
func.func @step(%x: tensor<2xf32>, %init: tensor<2xf32>, %w: tensor<3xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<2xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %o, %a : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(k, i) -> (i)>, affine_map<(k, i) -> (k)>,
                                        affine_map<(k, i) -> (i)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%y, %w : tensor<2xf32>, tensor<3xf32>) outs(%z0 : tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %z : tensor<2xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

// x = [1, 2], init = [3, 5], w = [1, 1, 1]: y = [3, 10], z = [9, 30].
func.func @main() {
  %x = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %init = arith.constant dense<[3.0, 5.0]> : tensor<2xf32>
  %w = arith.constant dense<1.0> : tensor<3xf32>
  %z = call @step(%x, %init, %w) : (tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  %u = tensor.cast %z : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
