// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-micro-batch="micro-batches=2"
// RUN: not ga-opt %s -split-input-file -ga-micro-batch="dynamic-micro-batches=1" 2>&1 | FileCheck %s --check-prefix=DYN

// DYN: 'ga.data_parallel' cannot be combined with dynamic-micro-batches

// A per-sample result of the step: no rank holds it in full.
func.func @per_sample_result(%x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32>
    attributes {ga.data_parallel} {
  %e = tensor.empty() : tensor<8x4xf32>
  // expected-error @+1 {{data-parallel: the step returns this per-sample value, which no rank holds in full}}
  %sq = linalg.mul ins(%x, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %sq : tensor<8x4xf32>
}

// -----

// A product over the batch: no collective combines the ranks' partial
// products.
func.func @product(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32>
    attributes {ga.data_parallel} {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{data-parallel: this reduction over the batch has no combiner that a collective applies}}
  %p = linalg.reduce { arith.mulf } ins(%x : tensor<8xf32>) outs(%z : tensor<f32>) dimensions = [0]
  return %p : tensor<f32>
}
