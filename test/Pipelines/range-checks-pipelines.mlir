// Every ga pipeline starts with --ga-check-constant-indices: a dimension
// index outside the rank (undefined at run time) is a located error with exit
// code 1, not an input for passes that index shapes with it (upstream
// canonicalization segfaulted on this step in --ga-lower-to-nvvm).
//
// RUN: not ga-opt %s --ga-accumulate=micro-batches=2 2>&1 | FileCheck %s
// RUN: not ga-opt %s --ga-lower-to-cpu 2>&1 | FileCheck %s
// RUN: not ga-opt %s --ga-lower-to-nvvm="chip=sm_90 format=isa" 2>&1 | FileCheck %s
// RUN: not ga-opt %s --ga-lower-to-gpu-loops 2>&1 | FileCheck %s
// RUN: not ga-opt %s --ga-lower-to-cpu-mpi 2>&1 | FileCheck %s
// CHECK: range-checks-pipelines.mlir:[[@LINE+9]]:10: error: 'tensor.dim' op dimension index -1 is out of range for a source of rank 2 (undefined at run time)

#id = affine_map<(b, f) -> (b, f)>
func.func @step(%x: tensor<8x3xf32>, %y: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<8x3xf32> {
  %e = tensor.empty() : tensor<8x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%in: f32, %o: f32):
    %c = arith.constant -1 : index
    %d = tensor.dim %x, %c : tensor<8x3xf32>
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}
