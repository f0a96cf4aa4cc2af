// RUN: ga-opt %s --ga-shard-optimizer="rank=0 world=2 params=0 state-results=1 state-args=1" -split-input-file -verify-diagnostics
// RUN: not ga-opt %s --ga-shard-optimizer="rank=2 world=2" -split-input-file 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not ga-opt %s --ga-shard-optimizer="func=other" -split-input-file 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not ga-opt %s --ga-shard-optimizer="params=7" -split-input-file 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not ga-opt %s --ga-shard-optimizer="state-results=1" -split-input-file 2>&1 | FileCheck %s --check-prefix=PAIRS

// RANK: error: ga-shard-optimizer: rank 2 of world 2 is out of range
// FUNC: error: ga-shard-optimizer: no function @other
// INDEX: error: ga-shard-optimizer: result index 7 out of range
// PAIRS: error: ga-shard-optimizer: 1 state results but 0 state arguments

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>

// A state whose update mixes rows (it reads the state transposed): it
// cannot be kept as rows, refused at the op that reads it.
func.func @train_step(%w: tensor<4x4xf32>, %m: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error @+1 {{ga-shard-optimizer: optimizer state argument #1 is read in full by this op: its update is not row by row, so the state cannot be sharded}}
  %m2 = linalg.generic {indexing_maps = [#tr2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  return %w, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A 0-d parameter has no rows to shard.
// expected-error @+1 {{ga-shard-optimizer: result #0 is not a static tensor of rank >= 1: 'tensor<f32>'}}
func.func @train_step(%w: tensor<f32>, %m: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %w, %m : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+1 {{ga-shard-optimizer: state result #1 and argument #1 differ in type}}
func.func @train_step(%w: tensor<4xf32>, %m: tensor<3xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}
