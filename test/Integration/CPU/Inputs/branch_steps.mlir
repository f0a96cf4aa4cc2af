// Two steps whose gradient scale 1/8 (B = 8) is applied on one side of a
// branch only: @flag_step branches on a scalar i1 argument, @data_step on the
// sign of the batch sum of its data. Used by verify-seeds.test with
// branch-wrong.transform.mlir, which changes that scale: the change shows only
// with inputs that take the scaled side.
#rows = affine_map<(b, f) -> (b, f)>
#cols = affine_map<(b, f) -> (f)>
func.func @flag_step(%w: tensor<4xf32>, %flag: i1, %x: tensor<8x4xf32> {ga.batch = 0 : i64})
    -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %g = scf.if %flag -> tensor<4xf32> {
    %scale = arith.constant 0.125 : f32
    %m = linalg.generic {indexing_maps = [affine_map<(f) -> (f)>, affine_map<(f) -> (f)>], iterator_types = ["parallel"]}
        ins(%sum : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %scale : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  } else {
    scf.yield %sum : tensor<4xf32>
  }
  %w2 = linalg.sub ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %w2 : tensor<4xf32>
}

func.func @data_step(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64})
    -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %first = tensor.extract %sum[%c0] : tensor<4xf32>
  %positive = arith.cmpf ogt, %first, %zero : f32
  %g = scf.if %positive -> tensor<4xf32> {
    %scale = arith.constant 0.125 : f32
    %m = linalg.generic {indexing_maps = [affine_map<(f) -> (f)>, affine_map<(f) -> (f)>], iterator_types = ["parallel"]}
        ins(%sum : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %scale : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  } else {
    scf.yield %sum : tensor<4xf32>
  }
  %w2 = linalg.sub ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %w2 : tensor<4xf32>
}
