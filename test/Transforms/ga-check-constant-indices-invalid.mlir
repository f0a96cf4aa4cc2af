// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-check-constant-indices -o /dev/null

// Every out-of-range index is reported, of tensors and of buffers.
func.func @out_of_range(%t: tensor<8x3xf32>, %m: memref<4xf32>) -> (index, index, index) {
  %cm1 = arith.constant -1 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 4611686018427387904 : index
  // expected-error @+1 {{'tensor.dim' op dimension index -1 is out of range for a source of rank 2 (undefined at run time)}}
  %a = tensor.dim %t, %cm1 : tensor<8x3xf32>
  // expected-error @+1 {{'memref.dim' op dimension index 1 is out of range for a source of rank 1 (undefined at run time)}}
  %b = memref.dim %m, %c1 : memref<4xf32>
  // expected-error @+1 {{'tensor.dim' op dimension index 4611686018427387904 is out of range for a source of rank 2 (undefined at run time)}}
  %c = tensor.dim %t, %big : tensor<8x3xf32>
  return %a, %b, %c : index, index, index
}

// -----

// In a payload, of a value that is not per-sample (the batch analysis does
// not look at it): the pipelines refuse it all the same.
#id = affine_map<(b, f) -> (b, f)>
func.func @payload(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %e = tensor.empty() : tensor<8x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.constant -1 : index
    // expected-error @+1 {{'tensor.dim' op dimension index -1 is out of range for a source of rank 2 (undefined at run time)}}
    %d = tensor.dim %x, %c : tensor<8x3xf32>
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}

// -----

// A chain of casts whose static shapes disagree (a frontend's lowering of a
// grouped convolution's weight gradient produced this one): each cast
// verifies alone, the chain is undefined at run time.
func.func @cast_chain(%x: tensor<8x8x3x3xf32>) -> tensor<8x1x3x3xf32> {
  %a = tensor.cast %x : tensor<8x8x3x3xf32> to tensor<?x?x?x?xf32>
  // expected-error @+1 {{'tensor.cast' op casts 'tensor<8x8x3x3xf32>' to 'tensor<8x1x3x3xf32>': dimension 1 is 8, not 1 (the shapes disagree; undefined at run time)}}
  %b = tensor.cast %a : tensor<?x?x?x?xf32> to tensor<8x1x3x3xf32>
  return %b : tensor<8x1x3x3xf32>
}

// -----

func.func @memref_cast_chain(%x: memref<4xf32>) -> memref<5xf32> {
  %a = memref.cast %x : memref<4xf32> to memref<?xf32>
  // expected-error @+1 {{'memref.cast' op casts 'memref<4xf32>' to 'memref<5xf32>': dimension 0 is 4, not 5}}
  %b = memref.cast %a : memref<?xf32> to memref<5xf32>
  return %b : memref<5xf32>
}
