// RUN: ga-opt %s -ga-decompose-aggregated-ops | FileCheck %s

// ga.grouped_matmul as an scf.for over its groups: the group's rows start
// where the last group ended and end at its clamped end; one linalg.matmul
// per group on slices of that data-dependent size (its weights' gradient
// with upstream's transposed lhs), accumulated into the init.

// CHECK-LABEL: func.func @rows
// CHECK:       %[[M:.*]] = tensor.dim %[[X:.*]], %{{.*}} : tensor<12x8xf32>
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
// CHECK:       %[[R:.*]]:2 = scf.for %[[G:.*]] = %[[C0]] to %[[C4]] step %{{.*}} iter_args(%[[START:.*]] = %[[C0]], %[[ACC:.*]] = %[[Y:.*]]) -> (index, tensor<12x16xf32>)
// CHECK:         %[[RAW:.*]] = tensor.extract %{{.*}}[%[[G]]] : tensor<4xi32>
// CHECK:         %[[I:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK:         %[[LO:.*]] = arith.maxsi %[[I]], %[[C0]] : index
// CHECK:         %[[HI:.*]] = arith.minsi %[[LO]], %[[M]] : index
// CHECK:         %[[END:.*]] = arith.maxsi %[[HI]], %[[START]] : index
// CHECK:         %[[SIZE:.*]] = arith.subi %[[END]], %[[START]] : index
// CHECK:         %[[XS:.*]] = tensor.extract_slice %[[X]][%[[START]], 0] [%[[SIZE]], 8] [1, 1] : tensor<12x8xf32> to tensor<?x8xf32>
// CHECK:         %[[YS:.*]] = tensor.extract_slice %[[ACC]][%[[START]], 0] [%[[SIZE]], 16] [1, 1] : tensor<12x16xf32> to tensor<?x16xf32>
// CHECK:         %[[WG:.*]] = tensor.extract_slice %{{.*}}[%[[G]], 0, 0] [1, 8, 16] [1, 1, 1] : tensor<4x8x16xf32> to tensor<8x16xf32>
// CHECK:         %[[P:.*]] = linalg.matmul ins(%[[XS]], %[[WG]] : tensor<?x8xf32>, tensor<8x16xf32>) outs(%[[YS]] : tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK:         %[[NEXT:.*]] = tensor.insert_slice %[[P]] into %[[ACC]][%[[START]], 0] [%[[SIZE]], 16] [1, 1]
// CHECK:         scf.yield %[[END]], %[[NEXT]] : index, tensor<12x16xf32>
// CHECK:       return %[[R]]#1
// CHECK-NOT:   ga.grouped_matmul
func.func @rows(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %ends: tensor<4xi32>,
                %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  %r = ga.grouped_matmul %x, %w ends %ends into %y
      : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// CHECK-LABEL: func.func @weight_gradient
// CHECK:       scf.for %[[G:.*]] = {{.*}} iter_args(%[[START:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (index, tensor<3x8x16xf32>)
// CHECK-NOT:     arith.index_cast
// CHECK:         %[[XS:.*]] = tensor.extract_slice %{{.*}}[%[[START]], 0] [%{{.*}}, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
// CHECK:         %[[GS:.*]] = tensor.extract_slice %{{.*}}[%[[START]], 0] [%{{.*}}, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
// CHECK:         %[[DS:.*]] = tensor.extract_slice %[[ACC]][%[[G]], 0, 0] [1, 8, 16] [1, 1, 1] : tensor<3x8x16xf32> to tensor<8x16xf32>
// CHECK:         %[[P:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[XS]], %[[GS]] : tensor<?x8xf32>, tensor<?x16xf32>) outs(%[[DS]] : tensor<8x16xf32>)
// CHECK:         tensor.insert_slice %[[P]] into %[[ACC]][%[[G]], 0, 0] [1, 8, 16] [1, 1, 1]
func.func @weight_gradient(%x: tensor<?x8xf32>, %g: tensor<?x16xf32>, %ends: tensor<3xindex>,
                           %d: tensor<3x8x16xf32>) -> tensor<3x8x16xf32> {
  %r = ga.grouped_matmul transpose_lhs %x, %g ends %ends into %d
      : tensor<?x8xf32>, tensor<?x16xf32>, tensor<3xindex> into tensor<3x8x16xf32>
  return %r : tensor<3x8x16xf32>
}

// -----

// With group_ids: an scf.for over the rows; a row whose id is in [0, E)
// meets its group's matrix (a 1-row matmul; the weights' gradient its outer
// product added to the group's matrix), any other row keeps the init.

// CHECK-LABEL: func.func @group_ids
// CHECK:       %[[M:.*]] = tensor.dim %[[X:.*]], %{{.*}} : tensor<?x8xf32>
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %[[M]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x16xf32>)
// CHECK:         %[[RAW:.*]] = tensor.extract %{{.*}}[%[[R]]] : tensor<?xi64>
// CHECK:         %[[G:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK:         %[[IN:.*]] = arith.andi
// CHECK:         scf.if %[[IN]] -> (tensor<?x16xf32>)
// CHECK:           %[[ROW:.*]] = tensor.extract_slice %[[X]][%[[R]], 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<1x8xf32>
// CHECK:           %[[W:.*]] = tensor.extract_slice %{{.*}}[%[[G]], 0, 0] [1, 8, 16] [1, 1, 1] : tensor<4x8x16xf32> to tensor<8x16xf32>
// CHECK:           linalg.matmul ins(%[[ROW]], %[[W]] : tensor<1x8xf32>, tensor<8x16xf32>)
// CHECK:         } else {
// CHECK:           scf.yield %[[ACC]] : tensor<?x16xf32>
// CHECK:       scf.for
// CHECK:         scf.if %{{.*}} -> (tensor<4x8x16xf32>)
// CHECK:           linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<1x8xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
func.func @group_ids(%x: tensor<?x8xf32>, %w: tensor<4x8x16xf32>, %ids: tensor<?xi64>,
                     %y0: tensor<?x16xf32>, %dw0: tensor<4x8x16xf32>)
    -> (tensor<?x16xf32>, tensor<4x8x16xf32>) {
  %y = ga.grouped_matmul group_ids %x, %w ends %ids into %y0
      : tensor<?x8xf32>, tensor<4x8x16xf32>, tensor<?xi64> into tensor<?x16xf32>
  %dw = ga.grouped_matmul transpose_lhs group_ids %x, %y ends %ids into %dw0
      : tensor<?x8xf32>, tensor<?x16xf32>, tensor<?xi64> into tensor<4x8x16xf32>
  return %y, %dw : tensor<?x16xf32>, tensor<4x8x16xf32>
}
