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

func.func @i16_scatter(%g: tensor<4xi16>) -> tensor<2xi16> {
  // expected-error @+1 {{'ga.reduce_scatter' op NCCL has no collective of this kind on 'i16' elements}}
  %r = ga.reduce_scatter <sum> %g shard 0 of 2 : tensor<4xi16> -> tensor<2xi16>
  return %r : tensor<2xi16>
}
