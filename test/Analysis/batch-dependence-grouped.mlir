// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -o /dev/null | FileCheck %s

// ga.grouped_matmul is per row (lib/Analysis/BatchGrouped.cpp): rows that are
// per-sample in order make a per-sample product whose micro-batch shifts the
// group ends by its first row. Ends computed from the whole batch are read
// after the loop that computes them (a second loop), as a statistic is.

// The weights' gradient sums over the rows: a reduction (add) over the
// batch, accumulated like a linalg one.
// CHECK-LABEL: @rows_per_sample: batch size 12, loops 1
// CHECK:         ga.grouped_matmul: batched(0)
// CHECK:         linalg.generic: reduced(add) [loop 1]
// CHECK:         ga.grouped_matmul: reduced(add) [loop 1]
func.func @rows_per_sample(%x: tensor<12x8xf32> {ga.batch = 0 : i64}, %w: tensor<4x8x5xf32>,
                           %ends: tensor<4xi32>) -> (tensor<f32>, tensor<4x8x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x5xf32>) -> tensor<12x5xf32>
  %y = ga.grouped_matmul %x, %w ends %ends into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<4xi32> into tensor<12x5xf32>
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<12x5xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %we = tensor.empty() : tensor<4x8x5xf32>
  %w0 = linalg.fill ins(%zero : f32) outs(%we : tensor<4x8x5xf32>) -> tensor<4x8x5xf32>
  %dw = ga.grouped_matmul transpose_lhs %x, %y ends %ends into %w0
      : tensor<12x8xf32>, tensor<12x5xf32>, tensor<4xi32> into tensor<4x8x5xf32>
  return %s, %dw : tensor<f32>, tensor<4x8x5xf32>
}

// -----

// The ends as a count over the batch (here of positive first features,
// a stand-in for a histogram of the routing): the product waits for it.
// CHECK-LABEL: @ends_from_batch: batch size 12, loops 2
// CHECK:         linalg.generic: reduced(add) data [loop 1]
// CHECK:         ga.grouped_matmul: batched(0)
func.func @ends_from_batch(%x: tensor<12x8xf32> {ga.batch = 0 : i64}, %w: tensor<4x8x5xf32>)
    -> tensor<12x5xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : i32
  %ie = tensor.empty() : tensor<4xi32>
  %i0 = linalg.fill ins(%c0 : i32) outs(%ie : tensor<4xi32>) -> tensor<4xi32>
  %ends = linalg.generic {indexing_maps = [affine_map<(n, g) -> (n, 0)>, affine_map<(n, g) -> (g)>],
                          iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<12x8xf32>) outs(%i0 : tensor<4xi32>) {
  ^bb0(%v: f32, %acc: i32):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %one = arith.extui %pos : i1 to i32
    %a = arith.addi %acc, %one : i32
    linalg.yield %a : i32
  } -> tensor<4xi32>
  %e = tensor.empty() : tensor<12x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x5xf32>) -> tensor<12x5xf32>
  %y = ga.grouped_matmul %x, %w ends %ends into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<4xi32> into tensor<12x5xf32>
  return %y : tensor<12x5xf32>
}

// -----

// With group_ids the group of each row is per-sample beside the row (the
// trace's form of transformers' experts, their sort left out): the product
// and its weights' gradient are per row, each micro-batch its own ids.
// CHECK-LABEL: @group_ids_per_sample: batch size 12, loops 1
// CHECK:         ga.grouped_matmul: batched(0)
// CHECK:         ga.grouped_matmul: reduced(add) [loop 1]
func.func @group_ids_per_sample(%x: tensor<12x8xf32> {ga.batch = 0 : i64}, %w: tensor<4x8x5xf32>,
                                %ids: tensor<12xi64> {ga.batch = 0 : i64})
    -> (tensor<12x5xf32>, tensor<4x8x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x5xf32>) -> tensor<12x5xf32>
  %y = ga.grouped_matmul group_ids %x, %w ends %ids into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<12xi64> into tensor<12x5xf32>
  %we = tensor.empty() : tensor<4x8x5xf32>
  %w0 = linalg.fill ins(%zero : f32) outs(%we : tensor<4x8x5xf32>) -> tensor<4x8x5xf32>
  %dw = ga.grouped_matmul transpose_lhs group_ids %x, %y ends %ids into %w0
      : tensor<12x8xf32>, tensor<12x5xf32>, tensor<12xi64> into tensor<4x8x5xf32>
  return %y, %dw : tensor<12x5xf32>, tensor<4x8x5xf32>
}
