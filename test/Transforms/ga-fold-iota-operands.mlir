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

// -----

// torch-mlir's x[..., [2], :]: the batch and token indices are iotas (a
// generic yielding its own linalg.index), reshaped to the gather's rank and
// read through maps with broadcast zeros; the list is a splat constant. All
// three become loop indices (the payload reads at d0, d1, 2, d3) and the
// wrap-around of negative indices is decided.
// CHECK-LABEL: func.func @list_index
// CHECK: linalg.generic
// CHECK-SAME: outs(
// CHECK-NOT: arith.cmpi
// CHECK-DAG: %[[D0:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[D1:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[D3:.*]] = linalg.index 3 : index
// CHECK: tensor.extract %{{.*}}[%[[D0]], %[[D1]], %[[C2]], %[[D3]]]
#i1 = affine_map<(d0) -> (d0)>
#b0 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>
#b1 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#b2 = affine_map<(d0, d1, d2, d3) -> (0, 0)>
#b3 = affine_map<(d0, d1, d2, d3) -> (d3)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @list_index(%x: tensor<6x5x4x4xf32>) -> tensor<6x5x1x4xf32> {
  %c0 = arith.constant 0 : i64
  %c6 = arith.constant 6 : i64
  %c5 = arith.constant 5 : i64
  %c4 = arith.constant 4 : i64
  %list = arith.constant dense<2> : tensor<1x1xi64>
  %e4 = tensor.empty() : tensor<4xi64>
  %cols = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%e4 : tensor<4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<4xi64>
  %e5 = tensor.empty() : tensor<5xi64>
  %tok = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%e5 : tensor<5xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<5xi64>
  %tok3 = tensor.expand_shape %tok [[0, 1, 2]] output_shape [5, 1, 1] : tensor<5xi64> into tensor<5x1x1xi64>
  %e6 = tensor.empty() : tensor<6xi64>
  %smp = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%e6 : tensor<6xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<6xi64>
  %smp4 = tensor.expand_shape %smp [[0, 1, 2, 3]] output_shape [6, 1, 1, 1] : tensor<6xi64> into tensor<6x1x1x1xi64>
  %e = tensor.empty() : tensor<6x5x1x4xf32>
  %r = linalg.generic {indexing_maps = [#b0, #b1, #b2, #b3, #b4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%smp4, %tok3, %list, %cols : tensor<6x1x1x1xi64>, tensor<5x1x1xi64>, tensor<1x1xi64>, tensor<4xi64>) outs(%e : tensor<6x5x1x4xf32>) {
  ^bb0(%a: i64, %b: i64, %c: i64, %d: i64, %o: f32):
    %n0 = arith.cmpi slt, %a, %c0 : i64
    %w0 = arith.addi %a, %c6 : i64
    %s0 = arith.select %n0, %w0, %a : i64
    %i0 = arith.index_cast %s0 : i64 to index
    %n1 = arith.cmpi slt, %b, %c0 : i64
    %w1 = arith.addi %b, %c5 : i64
    %s1 = arith.select %n1, %w1, %b : i64
    %i1 = arith.index_cast %s1 : i64 to index
    %n2 = arith.cmpi slt, %c, %c0 : i64
    %w2 = arith.addi %c, %c4 : i64
    %s2 = arith.select %n2, %w2, %c : i64
    %i2 = arith.index_cast %s2 : i64 to index
    %n3 = arith.cmpi slt, %d, %c0 : i64
    %w3 = arith.addi %d, %c4 : i64
    %s3 = arith.select %n3, %w3, %d : i64
    %i3 = arith.index_cast %s3 : i64 to index
    %v = tensor.extract %x[%i0, %i1, %i2, %i3] : tensor<6x5x4x4xf32>
    linalg.yield %v : f32
  } -> tensor<6x5x1x4xf32>
  return %r : tensor<6x5x1x4xf32>
}

// -----

// An iota split by expand_shape counts row-major: [6] -> [2, 3] is 3 * d0 + d1.
// CHECK-LABEL: func.func @split_iota
// CHECK-DAG: %[[D0:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[D1:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[M:.*]] = arith.muli %[[D0]], %{{.*}} : index
// CHECK: arith.addi
// CHECK: tensor.extract
#s1 = affine_map<(d0) -> (d0)>
#s2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @split_iota(%x: tensor<6xf32>) -> tensor<2x3xf32> {
  %e6 = tensor.empty() : tensor<6xi64>
  %iota = linalg.generic {indexing_maps = [#s1], iterator_types = ["parallel"]} outs(%e6 : tensor<6xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<6xi64>
  %split = tensor.expand_shape %iota [[0, 1]] output_shape [2, 3] : tensor<6xi64> into tensor<2x3xi64>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#s2, #s2], iterator_types = ["parallel", "parallel"]}
      ins(%split : tensor<2x3xi64>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %v = tensor.extract %x[%a] : tensor<6xf32>
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// A count broadcast by a generic (GPT-J's positions: an iota, expanded over
// the rotary dimension, then gathered from a table). Folding the iota into
// the broadcast leaves the broadcast an iota itself, and its consumer folds
// in the same run (a second run of the pass changes nothing: the step that a
// pipeline builds does not depend on how often it ran the pass).
// CHECK-LABEL: func.func @count_of_a_count
// CHECK-NOT: ins(%{{.*}} : tensor<8xi64>)
// CHECK-NOT: tensor<2x8xi64>
// CHECK: linalg.generic
// CHECK-NOT: ins(
// CHECK-DAG: %[[I1:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %{{.*}}[%[[I1]]] : tensor<8xf32>
#vec = affine_map<(d0, d1) -> (d1)>
#mat = affine_map<(d0, d1) -> (d0, d1)>
func.func @count_of_a_count(%table: tensor<8xf32>) -> tensor<2x8xf32> {
  %e8 = tensor.empty() : tensor<8xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%e8 : tensor<8xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<8xi64>
  %e28 = tensor.empty() : tensor<2x8xi64>
  %positions = linalg.generic {indexing_maps = [#vec, #mat], iterator_types = ["parallel", "parallel"]}
      ins(%iota : tensor<8xi64>) outs(%e28 : tensor<2x8xi64>) {
  ^bb0(%p: i64, %o: i64):
    linalg.yield %p : i64
  } -> tensor<2x8xi64>
  %e = tensor.empty() : tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [#mat, #mat], iterator_types = ["parallel", "parallel"]}
      ins(%positions : tensor<2x8xi64>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%p: i64, %o: f32):
    %i = arith.index_cast %p : i64 to index
    %v = tensor.extract %table[%i] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
