// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-fold-iota-operands \
// RUN:   -ga-check-training-step="micro-batches=2" -o /dev/null

// The pass itself refuses nothing: a constant it does not fold stays an
// operand, and the batch analysis decides. A gather of the batch at the
// sample's own position (the constant counts along d0) is per-sample after
// the fold; one at the reversed positions (x.flip(0) written as a gather)
// reads other samples and is refused.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @own_position(%x: tensor<4x3xf32> {ga.batch = 0 : i64}) -> tensor<4x3xf32> {
  %rows = arith.constant dense<[[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]]> : tensor<4x3xi64>
  %cols = arith.constant dense<[[0, 1, 2], [0, 1, 2], [0, 1, 2], [0, 1, 2]]> : tensor<4x3xi64>
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rows, %cols : tensor<4x3xi64>, tensor<4x3xi64>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: i64, %j: i64, %o: f32):
    // torch-mlir's wrap-around of negative indices.
    %c0 = arith.constant 0 : i64
    %c4 = arith.constant 4 : i64
    %neg = arith.cmpi slt, %i, %c0 : i64
    %up = arith.addi %i, %c4 : i64
    %w = arith.select %neg, %up, %i : i64
    %a = arith.index_cast %w : i64 to index
    %b = arith.index_cast %j : i64 to index
    %v = tensor.extract %x[%a, %b] : tensor<4x3xf32>
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @reversed(%x: tensor<4x3xf32> {ga.batch = 0 : i64}) -> tensor<4x3xf32> {
  %rows = arith.constant dense<[[3, 3, 3], [2, 2, 2], [1, 1, 1], [0, 0, 0]]> : tensor<4x3xi64>
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{no operand of 'linalg.generic' is per-sample, and its payload does not read the per-sample values it captures at one of its loops that spans the batch}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rows : tensor<4x3xi64>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %b = linalg.index 1 : index
    %v = tensor.extract %x[%a, %b] : tensor<4x3xf32>
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
