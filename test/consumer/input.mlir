func.func @step(%dw: tensor<4x8xbf16>, %acc: tensor<4x8xf32>, %loss: tensor<f32>, %lacc: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<f32>) {
  %g = ga.accumulate <add> %dw into %acc : tensor<4x8xbf16> into tensor<4x8xf32>
  %l = ga.accumulate <maxnumf> %loss into %lacc : tensor<f32> into tensor<f32>
  return %g, %l : tensor<4x8xf32>, tensor<f32>
}
