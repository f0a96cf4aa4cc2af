// RUN: ga-opt %s --split-input-file --convert-ga-to-host-collectives -verify-diagnostics

shard.grid @dp(shape = 2)
func.func @xor(%g: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{the host collectives runtime has no all-reduce of this kind on 'i32' elements}}
  %r = shard.all_reduce %g on @dp grid_axes = [0] reduction = bitwise_xor : tensor<4xi32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @unsigned(%g: tensor<4xui32>) -> tensor<4xui32> {
  // expected-error @+1 {{the host collectives runtime has no all-reduce of this kind on 'ui32' elements}}
  %r = ga.all_reduce <sum> %g : tensor<4xui32>
  return %r : tensor<4xui32>
}
