// RUN: ga-opt %s -test-ga-batch-dependence -split-input-file -verify-diagnostics -o /dev/null

// The weights' gradient with the batch along the columns of its lhs.
func.func @weight_gradient_columns(%x: tensor<8x12xf32> {ga.batch = 1 : i64}, %g: tensor<8x5xf32>,
                                   %ends: tensor<4xi32>, %d: tensor<4x12x5xf32>) -> tensor<4x12x5xf32> {
  // expected-error @+1 {{the weights' gradient of a grouped product is a sum over the batch along its rows (dimension 0 of both operands) only}}
  %dw = ga.grouped_matmul transpose_lhs %x, %g ends %ends into %d
      : tensor<8x12xf32>, tensor<8x5xf32>, tensor<4xi32> into tensor<4x12x5xf32>
  return %dw : tensor<4x12x5xf32>
}

// -----

// Ends that are per-sample (one per sample of a batch of 4).
func.func @ends_per_sample(%x: tensor<12x8xf32>, %w: tensor<4x8x5xf32>,
                           %ends: tensor<4xi32> {ga.batch = 0 : i64}, %z: tensor<12x5xf32>) -> tensor<12x5xf32> {
  // expected-error @+1 {{a grouped product whose group ends are per-sample}}
  %y = ga.grouped_matmul %x, %w ends %ends into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<4xi32> into tensor<12x5xf32>
  return %y : tensor<12x5xf32>
}

// -----

// Matrices that are per-sample (a batch of 4 samples, one matrix each).
func.func @matrices_per_sample(%x: tensor<12x8xf32>, %w: tensor<4x8x5xf32> {ga.batch = 0 : i64},
                               %ends: tensor<4xi32>, %z: tensor<12x5xf32>) -> tensor<12x5xf32> {
  // expected-error @+1 {{a grouped product whose matrices are per-sample}}
  %y = ga.grouped_matmul %x, %w ends %ends into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<4xi32> into tensor<12x5xf32>
  return %y : tensor<12x5xf32>
}

// -----

// Columns of the rows per sample (the batch along K).
func.func @batch_along_columns(%x: tensor<12x8xf32> {ga.batch = 1 : i64}, %w: tensor<4x8x5xf32>,
                               %ends: tensor<4xi32>, %z: tensor<12x5xf32>) -> tensor<12x5xf32> {
  // expected-error @+1 {{a grouped product is per sample along its rows (dimension 0 of lhs and of the result) only}}
  %y = ga.grouped_matmul %x, %w ends %ends into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<4xi32> into tensor<12x5xf32>
  return %y : tensor<12x5xf32>
}

// -----

// Group ids that are not per-sample beside the rows (the same ids for every
// micro-batch: a micro-batch's rows would meet the first rows' groups).
func.func @group_ids_uniform(%x: tensor<12x8xf32> {ga.batch = 0 : i64}, %w: tensor<4x8x5xf32>,
                             %ids: tensor<12xi64>, %z: tensor<12x5xf32>) -> tensor<12x5xf32> {
  // expected-error @+1 {{a grouped product by group ids needs one id per row, per-sample with its rows (dimension 0, 1 per sample)}}
  %y = ga.grouped_matmul group_ids %x, %w ends %ids into %z
      : tensor<12x8xf32>, tensor<4x8x5xf32>, tensor<12xi64> into tensor<12x5xf32>
  return %y : tensor<12x5xf32>
}

