// RUN: ga-opt %s | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | ga-opt | FileCheck %s

// Round trip of ga.grouped_matmul (include/ga/IR/GAGroupedOps.td): the
// grouped product of a mixture-of-experts layer and its weights' gradient.

// CHECK-LABEL: func.func @grouped
// CHECK: ga.grouped_matmul %{{.*}}, %{{.*}} ends %{{.*}} into %{{.*}} : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
// CHECK: ga.grouped_matmul transpose_lhs %{{.*}}, %{{.*}} ends %{{.*}} into %{{.*}} : tensor<12x8xf32>, tensor<12x16xf32>, tensor<4xi32> into tensor<4x8x16xf32>
// CHECK: ga.grouped_matmul %{{.*}}, %{{.*}} ends %{{.*}} into %{{.*}} : tensor<?x8xf64>, tensor<3x8x2xf64>, tensor<3xindex> into tensor<?x2xf64>
func.func @grouped(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %ends: tensor<4xi32>,
                   %y0: tensor<12x16xf32>, %dw0: tensor<4x8x16xf32>,
                   %xd: tensor<?x8xf64>, %wd: tensor<3x8x2xf64>, %ed: tensor<3xindex>,
                   %yd: tensor<?x2xf64>)
    -> (tensor<12x16xf32>, tensor<4x8x16xf32>, tensor<?x2xf64>) {
  %y = ga.grouped_matmul %x, %w ends %ends into %y0
      : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
  %dw = ga.grouped_matmul transpose_lhs %x, %y ends %ends into %dw0
      : tensor<12x8xf32>, tensor<12x16xf32>, tensor<4xi32> into tensor<4x8x16xf32>
  %r = ga.grouped_matmul %xd, %wd ends %ed into %yd
      : tensor<?x8xf64>, tensor<3x8x2xf64>, tensor<3xindex> into tensor<?x2xf64>
  return %y, %dw, %r : tensor<12x16xf32>, tensor<4x8x16xf32>, tensor<?x2xf64>
}

// With group_ids: the group of each row (both forms).
// CHECK-LABEL: func.func @group_ids
// CHECK: ga.grouped_matmul group_ids %{{.*}}, %{{.*}} ends %{{.*}} into %{{.*}} : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<?xi64> into tensor<?x16xf32>
// CHECK: ga.grouped_matmul transpose_lhs group_ids %{{.*}}, %{{.*}} ends %{{.*}} into %{{.*}} : tensor<?x8xf32>, tensor<?x16xf32>, tensor<?xi64> into tensor<4x8x16xf32>
func.func @group_ids(%x: tensor<?x8xf32>, %w: tensor<4x8x16xf32>, %ids: tensor<?xi64>,
                     %y0: tensor<?x16xf32>, %dw0: tensor<4x8x16xf32>)
    -> (tensor<?x16xf32>, tensor<4x8x16xf32>) {
  %y = ga.grouped_matmul group_ids %x, %w ends %ids into %y0
      : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<?xi64> into tensor<?x16xf32>
  %dw = ga.grouped_matmul transpose_lhs group_ids %x, %y ends %ids into %dw0
      : tensor<?x8xf32>, tensor<?x16xf32>, tensor<?xi64> into tensor<4x8x16xf32>
  return %y, %dw : tensor<?x16xf32>, tensor<4x8x16xf32>
}
