// RUN: ga-opt %s --ga-shard-parameters="rank=0 world=2 param-args=0 param-results=0" -split-input-file -verify-diagnostics
// RUN: not ga-opt %s --ga-shard-parameters="rank=2 world=2" -split-input-file 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not ga-opt %s --ga-shard-parameters="param-args=0,1 param-results=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=COUNT

// RANK: ga-shard-parameters: rank 2 of world 2 is out of range
// COUNT: ga-shard-parameters: 1 parameter results but 2 parameter arguments

// The new parameter is not the all-gathered rows of the argument (no
// --ga-shard-optimizer before).
// expected-error@+1 {{ga-shard-parameters: result #0 is not the all-gathered rows of parameter argument #0}}
func.func @train_step(%w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %w : tensor<4x8xf32>
}

// -----

// An all-gather of another rank's split.
// expected-error@+1 {{ga-shard-parameters: result #0 is not the all-gathered rows of parameter argument #0}}
func.func @train_step(%w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tensor.extract_slice %w[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %a = ga.all_gather %r shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}
