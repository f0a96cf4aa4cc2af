// RUN: ga-opt %s -split-input-file --ga-fold-iota-operands | FileCheck %s

// A gather at constant indices (torch-mlir's aten.index.Tensor with constant
// index tensors): the batch index is the loop index d0, the column index
// 2 * d1 + 1 (x[:, 1::2]). Both constants become linalg.index arithmetic and
// are dropped from the operands.
// CHECK-LABEL: func.func @strided_columns
// CHECK-NOT: arith.constant dense
// CHECK: linalg.generic
// CHECK-SAME: outs(
// CHECK-DAG: %[[I0:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[I1:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[S:.*]] = arith.muli %[[I1]], %{{.*}} : index
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @strided_columns(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %rows = arith.constant dense<[[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]> : tensor<4x4xi64>
  %cols = arith.constant dense<[[1, 3, 5, 7], [1, 3, 5, 7], [1, 3, 5, 7], [1, 3, 5, 7]]> : tensor<4x4xi64>
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%rows, %cols : tensor<4x4xi64>, tensor<4x4xi64>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%i: i64, %j: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %b = arith.index_cast %j : i64 to index
    %v = tensor.extract %x[%a, %b] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A dense resource constant (how torch-mlir's importer stores tensors) and a
// transposed indexing map: the index counts along d1.
// CHECK-LABEL: func.func @resource_transposed
// CHECK-NOT: dense_resource<iota>
// CHECK: linalg.index 1 : index
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @resource_transposed(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %idx = arith.constant dense_resource<iota> : tensor<3x2xi64>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<3x2xi64>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %v = tensor.extract %x[%a] : tensor<3xf32>
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      iota: "0x08000000000000000000000000000000000000000100000000000000010000000000000002000000000000000200000000000000"
    }
  }
#-}

// -----

// Constants that do not count along the loops stay operands: a reversal
// (negative step, which reads other samples), a wrap-around (negative
// offset), and a permutation.
// CHECK-LABEL: func.func @left_alone
// CHECK-DAG: arith.constant dense<[3, 2, 1, 0]> : tensor<4xi64>
// CHECK-DAG: arith.constant dense<[-1, 0, 1, 2]> : tensor<4xi64>
// CHECK-DAG: arith.constant dense<[0, 2, 1, 3]> : tensor<4xi64>
// CHECK-NOT: linalg.index
// CHECK: return
#id1 = affine_map<(d0) -> (d0)>
func.func @left_alone(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %rev = arith.constant dense<[3, 2, 1, 0]> : tensor<4xi64>
  %wrap = arith.constant dense<[-1, 0, 1, 2]> : tensor<4xi64>
  %perm = arith.constant dense<[0, 2, 1, 3]> : tensor<4xi64>
  %e = tensor.empty() : tensor<4xf32>
  %r0 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%rev : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %v = tensor.extract %x[%a] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%wrap : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %v = tensor.extract %x[%a] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r2 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%perm : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %v = tensor.extract %x[%a] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r0, %r1, %r2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
