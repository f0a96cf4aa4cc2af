// A first look at the `ga` dialect (the fallback demo of scripts/setup.sh
// until examples/mlp_step.mlir exists).
//
//   build/bin/ga-opt examples/dialect_roundtrip.mlir                 # round trip
//   build/bin/ga-opt examples/dialect_roundtrip.mlir --ga-accumulate="micro-batches=4"
//
// @sum_step is the smallest training step: the gradient of a linear model
// under a sum loss is a reduction over the batch of x (dw = sum_i x_i). With
// --ga-accumulate it becomes a loop over 4 micro-batches of 4 samples that
// accumulates into dw. @accumulate shows the ga ops themselves.

func.func @sum_step(%w: tensor<3xf32>, %x: tensor<16x3xf32> {ga.batch = 0 : i64})
    -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.01 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // dw = sum over the batch of x
  %dw = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>],
                        iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  // w' = w - lr * dw
  %w2 = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>, affine_map<(j) -> (j)>],
                        iterator_types = ["parallel"]}
      ins(%w, %dw : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%wi: f32, %gi: f32, %o: f32):
    %step = arith.mulf %gi, %lr : f32
    %n = arith.subf %wi, %step : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  return %w2 : tensor<3xf32>
}

func.func @accumulate(%dw: tensor<3xbf16>, %acc: tensor<3xf32>) -> tensor<3xf32> {
  %g = ga.accumulate <add> %dw into %acc : tensor<3xbf16> into tensor<3xf32>
  %r = ga.all_reduce <mean> %g bucket 0 : tensor<3xf32>
  return %r : tensor<3xf32>
}
