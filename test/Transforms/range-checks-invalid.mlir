// RUN: ga-opt %s -split-input-file -verify-diagnostics \
// RUN:   -ga-check-training-step="micro-batches=4" -o /dev/null
// RUN: ga-opt %s -split-input-file -verify-diagnostics \
// RUN:   -ga-accumulate="micro-batches=4" -o /dev/null

// Constants the passes read from IR and use as indices are range-checked
// first (include/ga/Utils/ConstantIndices.h). A `tensor.dim` whose constant
// index lies outside the rank of its source is valid IR (the verifier leaves
// it alone, folding could make it) but undefined at run time: a located
// refusal, not an out-of-bounds read of the shape.

func.func @dim_minus_one(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> index {
  %c = arith.constant -1 : index
  // expected-error @+1 {{dimension index -1 is out of range for a source of rank 2 (undefined at run time)}}
  %d = tensor.dim %x, %c : tensor<8x3xf32>
  return %d : index
}

// -----

// The rank itself is one past the last dimension.
func.func @dim_rank(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> index {
  %c = arith.constant 2 : index
  // expected-error @+1 {{dimension index 2 is out of range for a source of rank 2 (undefined at run time)}}
  %d = tensor.dim %x, %c : tensor<8x3xf32>
  return %d : index
}

// -----

// The largest index (and a dynamic batch: the index would select a size).
func.func @dim_huge(%x: tensor<?x3xf32> {ga.batch = 0 : i64}) -> index {
  %c = arith.constant 9223372036854775807 : index
  // expected-error @+1 {{dimension index 9223372036854775807 is out of range for a source of rank 2 (undefined at run time)}}
  %d = tensor.dim %x, %c : tensor<?x3xf32>
  return %d : index
}

// -----

// The size of a per-sample value read inside a payload.
#id = affine_map<(b, f) -> (b, f)>
func.func @dim_in_payload(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x3xf32> {
  %e = tensor.empty() : tensor<8x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.constant -1 : index
    // expected-error @+1 {{dimension index -1 is out of range for a source of rank 2 (undefined at run time)}}
    %d = tensor.dim %x, %c : tensor<8x3xf32>
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}
