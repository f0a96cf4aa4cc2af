// RUN: ga-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect \
// RUN:   -ga-check-training-step="micro-batches=4"

// BatchNorm: the batch mean (depends on the weights) normalizes every sample.
func.func @batchnorm(%w: tensor<3x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  // expected-note @+1 {{the value is reduced over the batch here}}
  %sum = linalg.reduce { arith.addf } ins(%h : tensor<8x3xf32>) outs(%e3 : tensor<3xf32>) dimensions = [0]
  %mb = linalg.broadcast ins(%sum : tensor<3xf32>) outs(%e : tensor<8x3xf32>) dimensions = [0]
  // expected-error @+2 {{batch coupling: per-sample computation uses a value reduced over the whole batch}}
  // expected-note @+1 {{it depends on parameters: use recompute-statistics to compute it exactly in an earlier loop}}
  %c = linalg.sub ins(%h, %mb : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %l = linalg.reduce { arith.addf } ins(%c : tensor<8x3xf32>) outs(%s0 : tensor<f32>) dimensions = [0, 1]
  return %l : tensor<f32>
}

// -----

// In-batch similarities pair every sample with every other.
func.func @contrastive(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  // expected-error @+1 {{batch coupling: operands #0 and #1 are per-sample along different loop dimensions (d0 and d1)}}
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %x : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// -----

// Softmax over the batch dimension.
func.func @softmax_over_batch(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x3xf32> {
  %e = tensor.empty() : tensor<8x3xf32>
  // expected-error @+1 {{batch coupling: softmax over the batch dimension}}
  %s = linalg.softmax dimension(0) ins(%x : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %s : tensor<8x3xf32>
}

// -----

func.func private @opaque(tensor<8x3xf32>) -> tensor<8x3xf32>

func.func @unknown_call(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x3xf32> {
  // expected-error @+1 {{call on per-sample values cannot be analyzed; inline the callee first}}
  %y = func.call @opaque(%x) : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %y : tensor<8x3xf32>
}

// -----

func.func @unregistered(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x3xf32> {
  // expected-error @+1 {{unregistered op 'foo.bar' on per-sample values cannot be analyzed}}
  %y = "foo.bar"(%x) : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %y : tensor<8x3xf32>
}

// -----

// A registered op without a BatchTransferOpInterface model, indexing maps or
// elementwise traits: refused, whatever it does.
func.func @no_model(%x: tensor<8x3xf32> {ga.batch = 0 : i64}, %s: tensor<1xindex>) -> tensor<24xf32> {
  // expected-error @+1 {{'tensor.reshape' on per-sample values is not understood by the batch analysis (it has no BatchTransferOpInterface model}}
  %y = tensor.reshape %x(%s) : (tensor<8x3xf32>, tensor<1xindex>) -> tensor<24xf32>
  return %y : tensor<24xf32>
}

// -----

func.func @side_effects(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x3xf32> {
  %m = memref.alloc() : memref<8x3xf32>
  // expected-error @+1 {{op with side effects on per-sample values: 'bufferization.materialize_in_destination'}}
  bufferization.materialize_in_destination %x in writable %m : (tensor<8x3xf32>, memref<8x3xf32>) -> ()
  return %x : tensor<8x3xf32>
}

// -----

func.func @select_samples(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<4x3xf32> {
  // expected-error @+1 {{slicing along the batch dimension selects samples}}
  %s = tensor.extract_slice %x[0, 0] [4, 3] [1, 1] : tensor<8x3xf32> to tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

func.func @read_one_sample(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{reading single elements of a per-sample value picks samples}}
  %v = tensor.extract %x[%c0, %c0] : tensor<8x3xf32>
  return %v : f32
}

// -----

func.func @pad_batch(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<9x3xf32> {
  %c = arith.constant 0.0 : f32
  // expected-error @+1 {{padding along the batch dimension adds samples}}
  %p = tensor.pad %x low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<8x3xf32> to tensor<9x3xf32>
  return %p : tensor<9x3xf32>
}

// -----

// Concatenating along the batch dimension stacks two batches; returned as
// they are, the stacks cannot be assembled from micro-batches.
func.func @concat_batch(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<16x3xf32> {
  %c = tensor.concat dim(0) %x, %x : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
  // expected-error @+1 {{per-sample result #0 stacks 2 batches along its batch dimension: reshape the stacks into an outer dimension before returning}}
  return %c : tensor<16x3xf32>
}

// -----

// Stacked batches read by anything but a reshape into an outer dimension.
func.func @stacked_read(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<16x3xf32> {
  %c = tensor.concat dim(0) %x, %x : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
  %e = tensor.empty() : tensor<16x3xf32>
  // expected-error @+1 {{'linalg.exp' reads 2 batches stacked along dimension 0 (a concatenation of per-sample values along the batch dimension): reshape the stacks into an outer dimension first}}
  %r = linalg.exp ins(%c : tensor<16x3xf32>) outs(%e : tensor<16x3xf32>) -> tensor<16x3xf32>
  return %r : tensor<16x3xf32>
}

// -----

// A reshape of the stacks that does not separate them from the batch.
func.func @stacked_bad_reshape(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<4x4x3xf32> {
  %c = tensor.concat dim(0) %x, %x : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
  // expected-error @+1 {{reshaping 2 stacked batches splits a batch apart}}
  %r = tensor.expand_shape %c [[0, 1], [2]] output_shape [4, 4, 3] : tensor<16x3xf32> into tensor<4x4x3xf32>
  return %r : tensor<4x4x3xf32>
}

// -----

// A per-sample value concatenated with data of another shape along the batch.
func.func @concat_batch_uniform(%x: tensor<8x3xf32> {ga.batch = 0 : i64}, %w: tensor<8x3xf32>) -> tensor<2x8x3xf32> {
  // expected-error @+1 {{concatenating a per-sample value with one that is not per-sample along the batch dimension mixes samples with other data}}
  %c = tensor.concat dim(0) %x, %w : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
  %r = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 8, 3] : tensor<16x3xf32> into tensor<2x8x3xf32>
  return %r : tensor<2x8x3xf32>
}

// -----

// The region of tensor.pad reads another sample (sample 0) of the input.
func.func @pad_region_reads_sample(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x5xf32> {
  %c0 = arith.constant 0 : index
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    // expected-error @+1 {{the region of 'tensor.pad' reads a per-sample value: only linalg payloads may read elements of per-sample values}}
    %v = tensor.extract %x[%c0, %c0] : tensor<8x3xf32>
    tensor.yield %v : f32
  } : tensor<8x3xf32> to tensor<8x5xf32>
  return %p : tensor<8x5xf32>
}

// -----

// A uniform tensor.generate whose region reads a per-sample value.
func.func @generate_reads_sample(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{per-sample values inside the regions of 'tensor.generate' are not supported}}
  %g = tensor.generate {
  ^bb0(%i: index):
    %v = tensor.extract %x[%c0, %c0] : tensor<8x3xf32>
    tensor.yield %v : f32
  } : tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

// An accumulation chain whose init is also read by the per-sample
// computation of the next reduction: a coupling (it depends on parameters).
func.func @chain_init_read(%w: tensor<3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{the value is reduced over the batch here}}
  %g1 = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x, %w : tensor<8x3xf32>, tensor<3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  // expected-error @+2 {{batch coupling: per-sample computation uses a value reduced over the whole batch}}
  // expected-note @+1 {{it depends on parameters}}
  %g2 = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>, affine_map<(b, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x, %g1 : tensor<8x3xf32>, tensor<3xf32>) outs(%g1 : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %acc = arith.addf %p, %o : f32
    linalg.yield %acc : f32
  } -> tensor<3xf32>
  return %g2 : tensor<3xf32>
}

// -----

func.func @interleave(%x: tensor<2x8xf32> {ga.batch = 1 : i64}) -> tensor<16xf32> {
  // expected-error @+1 {{collapsing the batch dimension into an outer dimension interleaves samples: the batch is dimension 1 of 'tensor<2x8xf32>', merged with dimension 0 of size 2 before it}}
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x8xf32> into tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

func.func @shifted_access(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<7xf32> {
  %e = tensor.empty() : tensor<7xf32>
  // expected-error @+1 {{operand #0 is indexed by 'd0 + 1' along its per-sample dimension 0}}
  %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i + 1)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<7xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<7xf32>
  return %d : tensor<7xf32>
}

// -----

// An order-dependent update (an exponential moving average over the samples)
// whose batch loop is not the outermost reduction loop.
func.func @ordered_inner(%x: tensor<3x8xf32> {ga.batch = 1 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  // expected-error @+1 {{reduction over the batch whose combiner is not a single associative op, and the batch loop d1 is not its outermost reduction loop (d0 is)}}
  %r = linalg.generic {indexing_maps = [affine_map<(f, b) -> (f, b)>, affine_map<(f, b) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<3x8xf32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %h = arith.constant 0.5 : f32
    %s = arith.mulf %acc, %h : f32
    %n = arith.addf %s, %a : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// expected-error @+1 {{per-sample arguments disagree on the batch size: argument #0 has 8 samples, argument #1 has 6}}
func.func @sizes_disagree(%x: tensor<8x3xf32> {ga.batch = 0 : i64}, %y: tensor<6xf32> {ga.batch = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{micro-batches = 4 exceeds the batch size 3 of 'too_small'}}
func.func @too_small(%x: tensor<3xf32> {ga.batch = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{training step 'multi_block' must be a single block}}
func.func @multi_block(%x: tensor<8xf32> {ga.batch = 0 : i64}) {
  cf.br ^bb1
^bb1:
  return
}

// -----

func.func @all_reduce_per_sample(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  // expected-error @+1 {{all-reduce of a per-sample value}}
  %r = ga.all_reduce <sum> %x : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A reduction over the batch in an scf.if is exact only when the condition
// does not depend on the samples: here it compares the loss, a reduction
// over the batch, so micro-batches would not take the full batch's branch.
func.func @reduction_in_region(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-note @+1 {{the condition is computed from this reduction over the batch}}
  %loss = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%z : tensor<f32>) dimensions = [0]
  %l = tensor.extract %loss[] : tensor<f32>
  %c = arith.cmpf ogt, %l, %zero : f32
  %r = scf.if %c -> tensor<f32> {
    %sq = linalg.mul ins(%x, %x : tensor<8xf32>, tensor<8xf32>) outs(%x : tensor<8xf32>) -> tensor<8xf32>
    // expected-error @+1 {{reduction over the batch inside 'scf.if' whose condition depends on the samples: micro-batches could take other branches than the full batch; reduce after the region}}
    %s = linalg.reduce { arith.addf } ins(%sq : tensor<8xf32>) outs(%z : tensor<f32>) dimensions = [0]
    scf.yield %s : tensor<f32>
  } else {
    scf.yield %z : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Only a top-level scf.if may hold a reduction over the batch: inside an
// scf.for each iteration would need its own accumulator.
func.func @reduction_in_loop(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %e) -> tensor<f32> {
    // expected-error @+1 {{reduction over the batch inside 'scf.for' is not supported: reduce after the region (only a top-level scf.if on a condition that does not depend on the samples may hold one)}}
    %s = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%a : tensor<f32>) dimensions = [0]
    scf.yield %s : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// An scf.if that reduces over the batch follows the loop; a per-sample value
// it yields would be needed inside the loop.
func.func @reduction_and_per_sample_result(%c: i1, %x: tensor<8xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<f32>
  // expected-error @+1 {{'scf.if' reduces over the batch and yields the per-sample result #1: yield the per-sample value from a separate scf.if}}
  %r, %y = scf.if %c -> (tensor<f32>, tensor<8xf32>) {
    %s = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%e : tensor<f32>) dimensions = [0]
    scf.yield %s, %x : tensor<f32>, tensor<8xf32>
  } else {
    scf.yield %e, %x : tensor<f32>, tensor<8xf32>
  }
  return %r, %y : tensor<f32>, tensor<8xf32>
}

// -----

// Per-sample work in the branch that reads the branch's own reduction (a
// mean subtracted inside the branch): it is repeated in every micro-batch,
// before the reduction is complete.
func.func @reduction_read_in_branch(%c: i1, %x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %r = scf.if %c -> tensor<f32> {
    %s = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%e : tensor<f32>) dimensions = [0]
    %e8 = tensor.empty() : tensor<8xf32>
    // expected-error @+1 {{per-sample work inside an 'scf.if' that reduces over the batch reads a value the branch computes from a reduction over the batch: that value is known only after the micro-batch loop; compute it before the scf.if}}
    %d = linalg.generic {indexing_maps = [affine_map<(b) -> (b)>, affine_map<(b) -> ()>, affine_map<(b) -> (b)>], iterator_types = ["parallel"]}
        ins(%x, %s : tensor<8xf32>, tensor<f32>) outs(%e8 : tensor<8xf32>) {
    ^bb0(%v: f32, %m: f32, %o: f32):
      %t = arith.subf %v, %m : f32
      linalg.yield %t : f32
    } -> tensor<8xf32>
    %q = linalg.reduce { arith.addf } ins(%d : tensor<8xf32>) outs(%e : tensor<f32>) dimensions = [0]
    scf.yield %q : tensor<f32>
  } else {
    scf.yield %e : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// A constant condition: the reduction's branch is the only live one, which
// the rewrite does not re-create in place of the dead one.
func.func @reduction_constant_condition(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %true = arith.constant true
  // expected-error @+1 {{'scf.if' on a constant condition reduces over the batch in its live branch: fold the branch first (for example with --canonicalize)}}
  %r = scf.if %true -> tensor<f32> {
    %s = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%e : tensor<f32>) dimensions = [0]
    scf.yield %s : tensor<f32>
  } else {
    scf.yield %e : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

func.func @branches_disagree(%c: i1, %x: tensor<8x8xf32> {ga.batch = 0 : i64}) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) permutation = [1, 0]
  // expected-error @+1 {{result #0 is per-sample along different dimensions in different places}}
  %r = scf.if %c -> tensor<8x8xf32> {
    scf.yield %x : tensor<8x8xf32>
  } else {
    scf.yield %t : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

func.func @region_per_sample(%x: tensor<8xf32> {ga.batch = 0 : i64}, %i: index) -> tensor<8xf32> {
  // expected-error @+1 {{per-sample values inside the regions of 'scf.index_switch' are not supported}}
  %r = scf.index_switch %i -> tensor<8xf32>
  case 0 {
    %n = math.exp %x : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  default {
    scf.yield %x : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// An scf.while whose body never runs (constant-false condition): dead-code
// analysis proves it, and the rewrite would still have to re-create it.
func.func @while_never_runs(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  // expected-error @+1 {{region #1 of 'scf.while' never runs}}
  %r = scf.while (%a = %x) : (tensor<8xf32>) -> tensor<8xf32> {
    %false = arith.constant false
    scf.condition(%false) %a : tensor<8xf32>
  } do {
  ^bb0(%b: tensor<8xf32>):
    scf.yield %b : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// x - x[0]: each micro-batch would subtract its own first sample.
func.func @captured_constant_index(%x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    // expected-error @+1 {{reads a per-sample value captured from above at a batch index other than its own batch loop d0}}
    %f = tensor.extract %x[%c0, %j] : tensor<8x4xf32>
    %r = arith.subf %a, %f : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %d : tensor<8x4xf32>
}

// -----

func.func @batch_loop_twice(%x: tensor<8x8xf32> {ga.batch = 0 : i64}) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{operand #0 is read through (d0) -> (d0, d0), which uses the batch loop d0 in more than one dimension}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

func.func @no_per_sample_operand(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{no operand of 'linalg.generic' is per-sample}}
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%b: f32, %o: f32):
    %j = linalg.index 0 : index
    %f = tensor.extract %x[%c3, %j] : tensor<8x4xf32>
    linalg.yield %f : f32
  } -> tensor<4xf32>
  return %d : tensor<4xf32>
}
