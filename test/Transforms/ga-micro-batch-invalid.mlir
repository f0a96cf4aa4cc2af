// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-micro-batch="micro-batches=4"
// RUN: not ga-opt %s -split-input-file -ga-micro-batch="micro-batches=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ga-opt %s -split-input-file -ga-micro-batch="micro-batches=2 accumulator-type=i32" 2>&1 | FileCheck %s --check-prefix=ACC
// RUN: not ga-opt %s -split-input-file -ga-micro-batch="micro-batches=2 func=nope" 2>&1 | FileCheck %s --check-prefix=FUNC

// ZERO: micro-batches must be at least 1, got 0
// ACC: accumulator-type must be one of f16, bf16, f32, f64, got 'i32'
// FUNC: no function with a body named 'nope'

// The rewrite refuses what the contract check refuses, at the same place.
func.func @batchnorm(%w: tensor<3x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  // expected-note @+1 {{the value is reduced over the batch here}}
  %sum = linalg.reduce { arith.addf } ins(%h : tensor<8x3xf32>) outs(%e3 : tensor<3xf32>) dimensions = [0]
  %mb = linalg.broadcast ins(%sum : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  // expected-error @+2 {{batch coupling}}
  // expected-note @+1 {{or allow-ghost-batch to accept per-micro-batch statistics}}
  %c = linalg.sub ins(%h, %mb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c : tensor<8x3xf32>) outs(%s0 : tensor<f32>) dimensions = [0, 1]
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{micro-batches = 4 exceeds the batch size 2 of 'tiny'}}
func.func @tiny(%x: tensor<2xf32> {ga.batch = 0 : i64}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

func.func @dynamic_result(%x: tensor<8x?xf32> {ga.batch = 0 : i64}) -> tensor<8x?xf32> {
  %c = tensor.cast %x : tensor<8x?xf32> to tensor<8x?xf32>
  // expected-error @+1 {{per-sample result #0 has a dynamic non-batch dimension 1}}
  return %c : tensor<8x?xf32>
}

// -----

// The rewrite refuses what it cannot slice exactly, like the contract check.
func.func @compound_uniform(%w: tensor<4xf32>, %x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{operand #1 is read through (d0) -> (d0 floordiv 2), which uses the batch loop d0 in a compound expression}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 floordiv 2)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x, %w : tensor<8xf32>, tensor<4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @captured_data_index(%x: tensor<8x4xf32> {ga.batch = 0 : i64}, %p: tensor<8xindex> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<8xindex>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%i: index, %o: f32):
    %j = linalg.index 1 : index
    // expected-error @+1 {{at a batch index other than its own batch loop d0}}
    %f = tensor.extract %x[%i, %j] : tensor<8x4xf32>
    linalg.yield %f : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}
