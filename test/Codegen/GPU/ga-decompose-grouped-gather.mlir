// RUN: ga-opt %s -ga-decompose-grouped-gather -split-input-file | FileCheck %s

// The grouped product with group ends: the group of each row as the first
// group whose end exceeds the row (a min over the groups, E = 4 for none),
// then one generic over (rows, N, K) that gathers the row's group matrix
// element with tensor.extract (a row in no group reads matrix 0 and adds 0).
// CHECK-LABEL: func.func @ends
// CHECK-NOT: ga.grouped_matmul
// CHECK: %[[NONE:.*]] = arith.constant 4 : i64
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[NONE]] : i64)
// CHECK: %[[IDS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<4xi32>) outs(%[[FILL]] : tensor<?xi64>)
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: arith.minsi
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[IDS]] : tensor<?x8xf32>, tensor<?xi64>)
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[G:.*]] = arith.select %[[IN]]
// CHECK: %[[GI:.*]] = arith.index_cast %[[G]] : i64 to index
// CHECK: %[[K:.*]] = linalg.index 2
// CHECK: %[[N:.*]] = linalg.index 1
// CHECK: tensor.extract %{{.*}}[%[[GI]], %[[K]], %[[N]]] : tensor<4x8x16xf32>
// CHECK: arith.mulf
// CHECK: arith.select %[[IN]]
// CHECK: arith.addf
func.func @ends(%x: tensor<?x8xf32>, %w: tensor<4x8x16xf32>, %e: tensor<4xi32>, %y: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// With group_ids (i64): the ids are the groups; the product gathers as above.
// CHECK-LABEL: func.func @ids
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<12xi64>
// CHECK-NOT: ga.grouped_matmul
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[IDS]] : tensor<12x8xf32>, tensor<12xi64>)
// CHECK: tensor.extract
func.func @ids(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %ids: tensor<12xi64>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  %r = ga.grouped_matmul group_ids %x, %w ends %ids into %y : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<12xi64> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

// The weights' gradient with group_ids of i32: the ids widened to i64, then
// a generic over (groups, K, N, rows) adding the rows of its group only.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d1)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @weights_gradient
// CHECK-NOT: ga.grouped_matmul
// CHECK: %[[IDS:.*]] = linalg.generic {{.*}}ins(%{{.*}} : tensor<12xi32>) outs(%{{.*}} : tensor<12xi64>)
// CHECK: arith.extsi
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[ROW]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %[[IDS]] : tensor<12x8xf32>, tensor<12x16xf32>, tensor<12xi64>) outs(%{{.*}} : tensor<4x8x16xf32>)
// CHECK: %[[G:.*]] = linalg.index 0
// CHECK: %[[G64:.*]] = arith.index_cast %[[G]] : index to i64
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %{{.*}}, %[[G64]]
// CHECK: arith.mulf
// CHECK: arith.select %[[MINE]]
// CHECK: arith.addf
func.func @weights_gradient(%x: tensor<12x8xf32>, %dy: tensor<12x16xf32>, %ids: tensor<12xi32>, %z: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %r = ga.grouped_matmul transpose_lhs group_ids %x, %dy ends %ids into %z : tensor<12x8xf32>, tensor<12x16xf32>, tensor<12xi32> into tensor<4x8x16xf32>
  return %r : tensor<4x8x16xf32>
}
