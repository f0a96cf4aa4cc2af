// A minimal training step with a per-sample argument, for tests that only
// look at a pipeline's passes: the sum of the samples.
func.func @step(%x: tensor<4x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.reduce ins(%x : tensor<4x3xf32>) outs(%z : tensor<3xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  return %s : tensor<3xf32>
}
