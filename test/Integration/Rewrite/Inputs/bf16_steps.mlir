// bf16 steps for bf16-tolerance.test.
#id = affine_map<(i, j) -> (i, j)>

// The weight gradient of a linear regression summed over 128 samples: the
// full-batch step accumulates its GEMMs in bf16, the rewrite (with
// accumulator-type=f32) in f32, so the two differ by the reference's bf16
// roundings.
func.func @linreg(%w: tensor<16x8xbf16>, %x: tensor<128x16xbf16> {ga.batch = 0 : i64}, %y: tensor<128x8xbf16> {ga.batch = 0 : i64}) -> tensor<16x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %scale = arith.constant 0.015625 : bf16
  %e = tensor.empty() : tensor<128x8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<128x8xbf16>) -> tensor<128x8xbf16>
  %p = linalg.matmul ins(%x, %w : tensor<128x16xbf16>, tensor<16x8xbf16>) outs(%z : tensor<128x8xbf16>) -> tensor<128x8xbf16>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<128x8xbf16>, tensor<128x8xbf16>) outs(%e : tensor<128x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %r = arith.subf %a, %b : bf16
    %g = arith.mulf %r, %scale : bf16
    linalg.yield %g : bf16
  } -> tensor<128x8xbf16>
  %ew = tensor.empty() : tensor<16x8xbf16>
  %zw = linalg.fill ins(%zero : bf16) outs(%ew : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<128x16xbf16>, tensor<128x8xbf16>) outs(%zw : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  return %dw : tensor<16x8xbf16>
}

// The same gradient of centred inputs x - mean_b(x) W (a BatchNorm-like
// statistic): with allow-ghost-batch each micro-batch centres on its own
// mean, a wrong answer that the bf16 tolerance must still catch.
func.func @centred(%w: tensor<16x8xbf16>, %x: tensor<128x16xbf16> {ga.batch = 0 : i64}) -> tensor<16x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %inv = arith.constant 0.0078125 : bf16
  %e = tensor.empty() : tensor<128x8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<128x8xbf16>) -> tensor<128x8xbf16>
  %p = linalg.matmul ins(%x, %w : tensor<128x16xbf16>, tensor<16x8xbf16>) outs(%z : tensor<128x8xbf16>) -> tensor<128x8xbf16>
  %e8 = tensor.empty() : tensor<8xbf16>
  %z8 = linalg.fill ins(%zero : bf16) outs(%e8 : tensor<8xbf16>) -> tensor<8xbf16>
  %sum = linalg.reduce { arith.addf } ins(%p : tensor<128x8xbf16>) outs(%z8 : tensor<8xbf16>) dimensions = [0]
  %c = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (j)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %sum : tensor<128x8xbf16>, tensor<8xbf16>) outs(%e : tensor<128x8xbf16>) {
  ^bb0(%a: bf16, %s: bf16, %o: bf16):
    %m = arith.mulf %s, %inv : bf16
    %r = arith.subf %a, %m : bf16
    %q = arith.mulf %r, %r : bf16
    linalg.yield %q : bf16
  } -> tensor<128x8xbf16>
  %ew = tensor.empty() : tensor<16x8xbf16>
  %zw = linalg.fill ins(%zero : bf16) outs(%ew : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %c : tensor<128x16xbf16>, tensor<128x8xbf16>) outs(%zw : tensor<16x8xbf16>) -> tensor<16x8xbf16>
  return %dw : tensor<16x8xbf16>
}
