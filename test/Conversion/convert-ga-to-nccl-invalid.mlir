// RUN: ga-opt %s --split-input-file --convert-ga-to-nccl -verify-diagnostics

shard.grid @dp(shape = 2)
func.func @xor(%g: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{NCCL has no all-reduce of this kind on 'i32' elements}}
  %r = shard.all_reduce %g on @dp grid_axes = [0] reduction = bitwise_xor : tensor<4xi32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @i16(%g: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error @+1 {{NCCL has no all-reduce of this kind on 'i16' elements}}
  %r = ga.all_reduce <sum> %g : tensor<4xi16>
  return %r : tensor<4xi16>
}

// -----

// NCCL's reduce-scatter takes parts of equal size: 3 rows on 2 ranks are
// refused (the host collectives take them).
func.func @uneven_scatter(%g: tensor<3x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'ga.reduce_scatter' op splits 'tensor<3x4xf32>' among 2 ranks: NCCL's reduce-scatter and all-gather take parts of equal static size (the first dimension a multiple of the world size)}}
  %r = ga.reduce_scatter <sum> %g shard 0 of 2 : tensor<3x4xf32> -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

func.func @uneven_gather(%w: tensor<3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'ga.all_gather' op splits 'tensor<5xf32>' among 2 ranks}}
  %r = ga.all_gather %w shard 1 of 2 : tensor<3xf32> -> tensor<5xf32>
  return %r : tensor<5xf32>
}

// -----

func.func @i16_scatter(%g: tensor<4xi16>) -> tensor<2xi16> {
  // expected-error @+1 {{'ga.reduce_scatter' op NCCL has no collective of this kind on 'i16' elements}}
  %r = ga.reduce_scatter <sum> %g shard 0 of 2 : tensor<4xi16> -> tensor<2xi16>
  return %r : tensor<2xi16>
}
