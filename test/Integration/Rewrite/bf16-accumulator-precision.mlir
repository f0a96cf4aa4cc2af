// RUN: ga-opt %s --ga-accumulate="micro-batches=4 accumulator-type=f32 func=grad_ga" --ga-lower-to-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s

// bf16 gradients with f32 accumulators: the weight gradient of a linear
// regression summed over 256 samples. @grad_full is the full-batch step in
// bf16 (its GEMM accumulates in bf16); @grad_ga is the same step rewritten
// into 4 micro-batches with accumulator-type=f32; @grad_f32 is the step in
// f32 on the same (bf16-representable) inputs, the reference. The rewritten
// step's error must be no worse than the full-batch step's; here it is
// several times smaller (the full-batch bf16 GEMM rounds every partial sum
// to bf16), which also shows that the accumulators really are f32.

// CHECK: err full [[FULL:.*]]
// CHECK: err ga [[GA:.*]]
// CHECK: ga no worse than full: 1
// CHECK: ga at least 4x more accurate: 1

#id = affine_map<(i, j) -> (i, j)>

func.func @grad_full(%w: tensor<16x8xbf16>, %x: tensor<256x16xbf16>, %y: tensor<256x8xbf16>) -> tensor<16x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %scale = arith.constant 0.0078125 : bf16   // 2 / 256
  %e = tensor.empty() : tensor<256x8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<256x8xbf16>) -> tensor<256x8xbf16>
  %p = linalg.matmul ins(%x, %w : tensor<256x16xbf16>, tensor<16x8xbf16>) outs(%z : tensor<256x8xbf16>) -> tensor<256x8xbf16>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<256x8xbf16>, tensor<256x8xbf16>) outs(%e : tensor<256x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %r = arith.subf %a, %b : bf16
    %g = arith.mulf %r, %scale : bf16
    linalg.yield %g : bf16
  } -> tensor<256x8xbf16>
  %ew = tensor.empty() : tensor<16x8xbf16>
  %zw = linalg.fill ins(%zero : bf16) outs(%ew : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<256x16xbf16>, tensor<256x8xbf16>) outs(%zw : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  return %dw : tensor<16x8xbf16>
}

func.func @grad_ga(%w: tensor<16x8xbf16>, %x: tensor<256x16xbf16> {ga.batch = 0 : i64}, %y: tensor<256x8xbf16> {ga.batch = 0 : i64}) -> tensor<16x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %scale = arith.constant 0.0078125 : bf16   // 2 / 256
  %e = tensor.empty() : tensor<256x8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<256x8xbf16>) -> tensor<256x8xbf16>
  %p = linalg.matmul ins(%x, %w : tensor<256x16xbf16>, tensor<16x8xbf16>) outs(%z : tensor<256x8xbf16>) -> tensor<256x8xbf16>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<256x8xbf16>, tensor<256x8xbf16>) outs(%e : tensor<256x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %r = arith.subf %a, %b : bf16
    %g = arith.mulf %r, %scale : bf16
    linalg.yield %g : bf16
  } -> tensor<256x8xbf16>
  %ew = tensor.empty() : tensor<16x8xbf16>
  %zw = linalg.fill ins(%zero : bf16) outs(%ew : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<256x16xbf16>, tensor<256x8xbf16>) outs(%zw : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  return %dw : tensor<16x8xbf16>
}

func.func @grad_f32(%w: tensor<16x8xf32>, %x: tensor<256x16xf32>, %y: tensor<256x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0078125 : f32   // 2 / 256
  %e = tensor.empty() : tensor<256x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<256x8xf32>) -> tensor<256x8xf32>
  %p = linalg.matmul ins(%x, %w : tensor<256x16xf32>, tensor<16x8xf32>) outs(%z : tensor<256x8xf32>) -> tensor<256x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<256x8xf32>, tensor<256x8xf32>) outs(%e : tensor<256x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    %g = arith.mulf %r, %scale : f32
    linalg.yield %g : f32
  } -> tensor<256x8xf32>
  %ew = tensor.empty() : tensor<16x8xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<256x16xf32>, tensor<256x8xf32>) outs(%zw : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// Deterministic inputs in [-1, 1): sin of a scaled linear index, rounded
// to bf16 so that both precisions see the same values.
func.func @input(%rows: index, %salt: f32, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%init : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.constant 37 : index
    %k = arith.muli %i, %c : index
    %l = arith.addi %k, %j : index
    %li = arith.index_cast %l : index to i64
    %lf = arith.sitofp %li : i64 to f32
    %a = arith.mulf %lf, %salt : f32
    %s = math.sin %a : f32
    %b = arith.truncf %s : f32 to bf16
    %v = arith.extf %b : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @max_abs_error(%a: tensor<16x8xf32>, %b: tensor<16x8xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %m = linalg.generic {indexing_maps = [#id, #id, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%a, %b : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %n = arith.maximumf %acc, %ad : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %v = tensor.extract %m[] : tensor<f32>
  return %v : f32
}

func.func @widen(%a: tensor<16x8xbf16>) -> tensor<16x8xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<16x8xbf16>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

func.func @narrow(%a: tensor<?x?xf32>) -> tensor<?x?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x?xf32>) outs(%e : tensor<?x?xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %y = arith.truncf %x : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<?x?xbf16>
  return %r : tensor<?x?xbf16>
}

func.func @main() {
  %c256 = arith.constant 256 : index
  %c16 = arith.constant 16 : index
  %c8 = arith.constant 8 : index
  %s1 = arith.constant 0.731 : f32
  %s2 = arith.constant 0.377 : f32
  %s3 = arith.constant 1.913 : f32
  %ex = tensor.empty(%c256, %c16) : tensor<?x?xf32>
  %ey = tensor.empty(%c256, %c8) : tensor<?x?xf32>
  %ew = tensor.empty(%c16, %c8) : tensor<?x?xf32>
  %xd = call @input(%c256, %s1, %ex) : (index, f32, tensor<?x?xf32>) -> tensor<?x?xf32>
  %yd = call @input(%c256, %s2, %ey) : (index, f32, tensor<?x?xf32>) -> tensor<?x?xf32>
  %wd = call @input(%c16, %s3, %ew) : (index, f32, tensor<?x?xf32>) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<256x16xf32>
  %y = tensor.cast %yd : tensor<?x?xf32> to tensor<256x8xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<16x8xf32>
  %xbd = call @narrow(%xd) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %ybd = call @narrow(%yd) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %wbd = call @narrow(%wd) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %xb = tensor.cast %xbd : tensor<?x?xbf16> to tensor<256x16xbf16>
  %yb = tensor.cast %ybd : tensor<?x?xbf16> to tensor<256x8xbf16>
  %wb = tensor.cast %wbd : tensor<?x?xbf16> to tensor<16x8xbf16>
  %ref = call @grad_f32(%w, %x, %y) : (tensor<16x8xf32>, tensor<256x16xf32>, tensor<256x8xf32>) -> tensor<16x8xf32>
  %full = call @grad_full(%wb, %xb, %yb) : (tensor<16x8xbf16>, tensor<256x16xbf16>, tensor<256x8xbf16>) -> tensor<16x8xbf16>
  %ga = call @grad_ga(%wb, %xb, %yb) : (tensor<16x8xbf16>, tensor<256x16xbf16>, tensor<256x8xbf16>) -> tensor<16x8xbf16>
  %fullw = call @widen(%full) : (tensor<16x8xbf16>) -> tensor<16x8xf32>
  %gaw = call @widen(%ga) : (tensor<16x8xbf16>) -> tensor<16x8xf32>
  %err_full = call @max_abs_error(%fullw, %ref) : (tensor<16x8xf32>, tensor<16x8xf32>) -> f32
  %err_ga = call @max_abs_error(%gaw, %ref) : (tensor<16x8xf32>, tensor<16x8xf32>) -> f32
  %ok = arith.cmpf ole, %err_ga, %err_full : f32
  %oki = arith.extui %ok : i1 to i32
  %four = arith.constant 4.0 : f32
  %err_ga4 = arith.mulf %err_ga, %four : f32
  %better = arith.cmpf ole, %err_ga4, %err_full : f32
  %betteri = arith.extui %better : i1 to i32
  vector.print str "err full "
  vector.print %err_full : f32
  vector.print str "err ga "
  vector.print %err_ga : f32
  vector.print str "ga no worse than full: "
  vector.print %oki : i32
  vector.print str "ga at least 4x more accurate: "
  vector.print %betteri : i32
  return
}
