// RUN: ga-opt %s -test-ga-batch-dependence -o /dev/null 2>&1 | FileCheck %s

// A refused op that its frontend gave no source line (here `loc(unknown)`,
// as torch-mlir leaves the sum of a tensor's gradients from several uses)
// is reported at the line of the nearest op along its def-use chains that
// has one, and so is the reduction named in the note: a diagnostic always
// names a line of the model.

// CHECK: model.py:24:0: error: batch coupling: per-sample computation uses a value reduced over the whole batch
// CHECK: model.py:23:0: note: the value is reduced over the batch here
// CHECK-NOT: <unknown>
func.func @coupled(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> (b, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<8x4xf32> loc("model.py":22:0)
  %e4 = tensor.empty() : tensor<4xf32> loc(unknown)
  %z = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32> loc(unknown)
  %mean = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%h : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32> loc(unknown)
  %scaled = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]} ins(%mean : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32> loc("model.py":23:0)
  %centered = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> (b, j)>], iterator_types = ["parallel", "parallel"]} ins(%h, %scaled : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<8x4xf32> loc(unknown)
  %out = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b, j)>], iterator_types = ["parallel", "parallel"]} ins(%centered : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32> loc("model.py":24:0)
  return %out : tensor<8x4xf32>
}
