// RUN: ga-opt %s -ga-lower-library-ops -ga-check-library-ops-lowered | FileCheck %s

// A step without library ops passes unchanged (ga ops of other kinds
// included: the CPU lowering decomposes them).
// CHECK-LABEL: func.func @no_library_ops
// CHECK:         ga.grouped_matmul
// CHECK:         return
func.func @no_library_ops(%x: tensor<6x4xf32>, %w: tensor<2x4x3xf32>,
                          %ends: tensor<2xi32>, %init: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %y = ga.grouped_matmul %x, %w ends %ends into %init : tensor<6x4xf32>, tensor<2x4x3xf32>, tensor<2xi32> into tensor<6x3xf32>
  return %y : tensor<6x3xf32>
}

// After --ga-lower-library-ops the all-reduce is a runtime call, which
// passes.
// CHECK-LABEL: func.func @lowered
// CHECK-NOT:       ga.nccl_all_reduce
// CHECK:           call @gaNcclAllReduce
func.func @lowered(%g: memref<12xf32>) {
  ga.nccl_all_reduce %g {datatype = 7 : i32, reduction = 0 : i32} : memref<12xf32>
  return
}
