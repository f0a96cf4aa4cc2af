// x ** 2 as torch-mlir emits it (math.fpowi with an i64 exponent), found by
// the PyTorch frontend: the default CPU lowering failed on it. Used by
// lower-fpowi.test.
#id = affine_map<(d0) -> (d0)>
func.func @step(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c2 = arith.constant 2 : i64
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = math.fpowi %a, %c2 : f32, i64
    linalg.yield %p : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
