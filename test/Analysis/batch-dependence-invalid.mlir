// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -verify-diagnostics -o /dev/null

// A captured per-sample tensor read at a constant batch index (x - x[0]):
// each micro-batch would read its own first sample.
func.func @captured_constant_index(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    // expected-error @+1 {{'linalg.generic' reads a per-sample value captured from above at a batch index other than its own batch loop d0}}
    %f = tensor.extract %x[%c0, %j] : tensor<8x4xf32>
    %r = arith.subf %a, %f : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}

// -----

// The batch index is data (a permutation of the samples).
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

// -----

// The batch index is computed from the batch loop (the next sample).
func.func @captured_shifted_index(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<8xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %n = arith.addi %i, %c1 : index
    %m = arith.minui %n, %c7 : index
    // expected-error @+1 {{at a batch index other than its own batch loop d0}}
    %f = tensor.extract %x[%m] : tensor<8xf32>
    %r = arith.subf %f, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// A captured per-sample tensor used by something other than tensor.extract.
func.func @captured_other_use(%x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    // expected-error @+1 {{'linalg.generic' uses a per-sample value captured from above in 'tensor.insert'}}
    %t = tensor.insert %v into %x[%i, %c0] : tensor<8x4xf32>
    %f = tensor.extract %t[%i, %c0] : tensor<8x4xf32>
    linalg.yield %f : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}

// -----

// No operand is per-sample: the op has no batch loop to split.
func.func @no_per_sample_operand(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{no operand of 'linalg.generic' is per-sample, and its payload does not read the per-sample values it captures at one of its loops that spans the batch}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%b: f32, %o: f32):
    %j = linalg.index 0 : index
    %f = tensor.extract %x[%c0, %j] : tensor<8x4xf32>
    %m = arith.mulf %f, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// The batch loop in two dimensions of one per-sample operand (a diagonal).
func.func @batch_loop_twice(%w: tensor<8xf32>, %x: tensor<8x8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{operand #0 is read through (d0) -> (d0, d0), which uses the batch loop d0 in more than one dimension}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x, %w : tensor<8x8xf32>, tensor<8xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A uniform operand read through a compound expression of the batch loop.
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

// Both: the batch loop twice in a uniform operand, in compound expressions.
func.func @compound_twice(%w: tensor<8x4xf32>, %x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{operand #1 is read through (d0) -> (d0, d0 floordiv 2), which uses the batch loop d0 in more than one dimension}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0, d0 floordiv 2)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x, %w : tensor<8xf32>, tensor<8x4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A chain of iteration arguments that reaches %a3 only on the third
// iteration of the fixpoint: the reduction over it inside the loop reduces
// over the batch.
func.func @loop_carried_chain(%w: tensor<8x4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %r:5 = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %zs, %a3 = %w, %a2 = %w, %a1 = %w, %a0 = %x) -> (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    // expected-error @+1 {{reduction over the batch inside 'scf.for' is not supported}}
    %s = linalg.reduce { arith.addf } ins(%a3 : tensor<8x4xf32>) outs(%acc : tensor<f32>) dimensions = [0, 1]
    scf.yield %s, %a2, %a1, %a0, %a0 : tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
  return %r#0 : tensor<f32>
}

// -----

// Read at its own loop, but that loop spans 4 entries of a uniform tensor,
// not the 8 samples.
func.func @inferred_loop_not_the_batch(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{no operand of 'linalg.generic' is per-sample, and its payload does not read the per-sample values it captures at one of its loops that spans the batch}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%b: f32, %o: f32):
    %j = linalg.index 0 : index
    %f = tensor.extract %x[%j, %c0] : tensor<8x4xf32>
    %m = arith.mulf %f, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// A dynamic batch, and the loop is sized by an argument, not by the batch.
func.func @inferred_loop_unknown_size(%k: index, %x: tensor<?xf32> {ga.batch = 0 : i64}) -> tensor<?xf32> {
  %e = tensor.empty(%k) : tensor<?xf32>
  // expected-error @+1 {{no operand of 'linalg.generic' is per-sample, and its payload does not read the per-sample values it captures at one of its loops that spans the batch}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<?xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 0 : index
    %f = tensor.extract %x[%j] : tensor<?xf32>
    linalg.yield %f : f32
  } -> tensor<?xf32>
  return %d : tensor<?xf32>
}
