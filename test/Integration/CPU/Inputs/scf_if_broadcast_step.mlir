// A step (found by tools/ga-fuzz) whose scf.if result, a buffer with dynamic
// strides after bufferization, is read whole by every lane of a vectorized op:
// the 0-d vector read did not lower to LLVM. Used by lower-dynamic-strides.test.
func.func @train_step(%x0: tensor<11x4xf32> {ga.batch = 0 : i64},
    %lr1: f32 {ga.init = "uniform"},
    %x2: tensor<11xi64> {ga.batch = 0 : i64, ga.range = [0, 3]},
    %x3: tensor<11xf32> {ga.batch = 0 : i64, ga.init = "mask"},
    %w4: tensor<4x3xf32>)
    -> (tensor<4x3xf32>) {
  %c0 = arith.constant 0.000000000e+00 : f32
  %c1 = arith.constant 1.000000000e+00 : f32
  %c2 = arith.constant 5.000000000e-01 : f32
  %c3 = arith.constant 0 : index
  %cond42 = arith.cmpf ogt, %lr1, %c2 : f32
  %if43 = scf.if %cond42 -> (tensor<11x4xf32>) {
    %e44 = tensor.empty() : tensor<11x4xf32>
    %g45 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%x0 : tensor<11x4xf32>) outs(%e44 : tensor<11x4xf32>) {
    ^bb0(%a46: f32, %a47: f32):
      %s48 = arith.negf %a46 : f32
      linalg.yield %s48 : f32
    } -> tensor<11x4xf32>
    %n49 = tensor.dim %x0, %c3 : tensor<11x4xf32>
    %ni50 = arith.index_cast %n49 : index to i64
    %nf51 = arith.sitofp %ni50 : i64 to f32
    %e52 = tensor.empty() : tensor<11x4xf32>
    %g53 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
        ins(%g45 : tensor<11x4xf32>) outs(%e52 : tensor<11x4xf32>) {
    ^bb0(%a54: f32, %a55: f32):
      %s56 = arith.divf %a54, %nf51 : f32
      linalg.yield %s56 : f32
    } -> tensor<11x4xf32>
    scf.yield %g53 : tensor<11x4xf32>
  } else {
    %e57 = tensor.empty() : tensor<11x4xf32>
    %g58 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
        ins(%x0 : tensor<11x4xf32>) outs(%e57 : tensor<11x4xf32>) {
    ^bb0(%a59: f32, %a60: f32):
      %s61 = math.tanh %a59 : f32
      %s62 = arith.mulf %s61, %s61 : f32
      linalg.yield %s62 : f32
    } -> tensor<11x4xf32>
    scf.yield %g58 : tensor<11x4xf32>
  }
  %e149 = tensor.empty() : tensor<4x3xf32>
  %z150 = linalg.fill ins(%c0 : f32) outs(%e149 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g151 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%if43, %x0, %w4 : tensor<11x4xf32>, tensor<11x4xf32>, tensor<4x3xf32>) outs(%z150 : tensor<4x3xf32>) {
  ^bb0(%a152: f32, %a153: f32, %a154: f32, %a155: f32):
    %s156 = math.sin %a153 : f32
    %s157 = arith.mulf %a152, %s156 : f32
    %s158 = math.sin %a154 : f32
    %s159 = arith.mulf %s157, %s158 : f32
    %s160 = arith.addf %a155, %s159 : f32
    linalg.yield %s160 : f32
  } -> tensor<4x3xf32>
  %e161 = tensor.empty() : tensor<4x3xf32>
  %g162 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
      ins(%w4, %g151 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e161 : tensor<4x3xf32>) {
  ^bb0(%a163: f32, %a164: f32, %a165: f32):
    %s166 = arith.mulf %lr1, %a164 : f32
    %s167 = arith.subf %a163, %s166 : f32
    linalg.yield %s167 : f32
  } -> tensor<4x3xf32>
  return %g162 : tensor<4x3xf32>
}
