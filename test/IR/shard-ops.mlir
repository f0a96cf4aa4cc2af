// RUN: ga-opt %s | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: ga-opt %s -emit-bytecode | ga-opt | FileCheck %s

// Round trip of the sharded collectives of ZeRO-1 (include/ga/IR/GAShardOps.td),
// in the custom and the generic form. They are kept out of ops.mlir because
// they lower only to host collectives (--convert-ga-to-host-collectives):
// the GPU sweep (bench/gpu_lower_all.py) lowers every file that holds a step
// through NVVM and leaves out the host-only ones.

// CHECK-LABEL: func.func @sharded_collectives
// CHECK:         %[[S:.*]] = ga.reduce_scatter <sum> %{{.*}} shard 1 of 3 : tensor<16x10xf32> -> tensor<5x10xf32>
// CHECK:         %[[M:.*]] = ga.reduce_scatter <mean> %{{.*}} shard 2 of 3 : tensor<4xf32> -> tensor<2xf32>
// CHECK:         ga.all_gather %[[S]] shard 1 of 3 : tensor<5x10xf32> -> tensor<16x10xf32>
// CHECK:         ga.all_gather %[[M]] shard 2 of 3 : tensor<2xf32> -> tensor<4xf32>
// GENERIC-LABEL: sym_name = "sharded_collectives"
// GENERIC:       "ga.reduce_scatter"(%{{.*}}) <{kind = #ga.collective<sum>, rank = 1 : i64, world = 3 : i64}> : (tensor<16x10xf32>) -> tensor<5x10xf32>
// GENERIC:       "ga.all_gather"(%{{.*}}) <{rank = 1 : i64, world = 3 : i64}> : (tensor<5x10xf32>) -> tensor<16x10xf32>
func.func @sharded_collectives(%g: tensor<16x10xf32>, %b: tensor<4xf32>) -> (tensor<16x10xf32>, tensor<4xf32>) {
  %0 = ga.reduce_scatter <sum> %g shard 1 of 3 : tensor<16x10xf32> -> tensor<5x10xf32>
  %1 = ga.reduce_scatter <mean> %b shard 2 of 3 : tensor<4xf32> -> tensor<2xf32>
  %2 = ga.all_gather %0 shard 1 of 3 : tensor<5x10xf32> -> tensor<16x10xf32>
  %3 = ga.all_gather %1 shard 2 of 3 : tensor<2xf32> -> tensor<4xf32>
  return %2, %3 : tensor<16x10xf32>, tensor<4xf32>
}
