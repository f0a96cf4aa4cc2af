// RUN: ga-opt %s -split-input-file -verify-diagnostics

func.func @ends_not_1d(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %e: tensor<2x2xi32>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{group ends must be a static 1-d tensor of integers}}
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<2x2xi32> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

func.func @ends_float(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %e: tensor<4xf32>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{group ends must be a static 1-d tensor of integers}}
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<4xf32> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

func.func @mixed_types(%x: tensor<12x8xf64>, %w: tensor<4x8x16xf32>, %e: tensor<4xi32>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{needs float operands of one element type}}
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<12x8xf64>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

func.func @groups_differ(%x: tensor<12x8xf32>, %w: tensor<3x8x16xf32>, %e: tensor<4xi32>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{rhs must be 4x8xN (a matrix per group)}}
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<12x8xf32>, tensor<3x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

func.func @rows_differ(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %e: tensor<4xi32>, %y: tensor<10x16xf32>) -> tensor<10x16xf32> {
  // expected-error @+1 {{the result must be 12x16}}
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<10x16xf32>
  return %r : tensor<10x16xf32>
}

// -----

func.func @lhs_not_rows(%x: tensor<12xf32>, %w: tensor<4x8x16xf32>, %e: tensor<4xi32>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{lhs must be rows (M x K)}}
  %r = ga.grouped_matmul %x, %w ends %e into %y : tensor<12xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

func.func @transposed_rows_differ(%x: tensor<12x8xf32>, %g: tensor<11x16xf32>, %e: tensor<4xi32>, %d: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{with transpose_lhs, rhs must have lhs's rows}}
  %r = ga.grouped_matmul transpose_lhs %x, %g ends %e into %d : tensor<12x8xf32>, tensor<11x16xf32>, tensor<4xi32> into tensor<4x8x16xf32>
  return %r : tensor<4x8x16xf32>
}

// -----

func.func @transposed_result(%x: tensor<12x8xf32>, %g: tensor<12x16xf32>, %e: tensor<4xi32>, %d: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{with transpose_lhs, the result must be 4x8x16 (groups x lhs columns x rhs columns)}}
  %r = ga.grouped_matmul transpose_lhs %x, %g ends %e into %d : tensor<12x8xf32>, tensor<12x16xf32>, tensor<4xi32> into tensor<4x16x8xf32>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @group_ids_rows(%x: tensor<12x8xf32>, %w: tensor<4x8x16xf32>, %ids: tensor<11xi64>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{with group_ids, the groups must be a 1-d tensor of integers, one per row of lhs}}
  %r = ga.grouped_matmul group_ids %x, %w ends %ids into %y : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<11xi64> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

func.func @group_ids_matrices(%x: tensor<12x8xf32>, %w: tensor<8x16xf32>, %ids: tensor<12xi64>, %y: tensor<12x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{with group_ids, rhs must be a matrix per group}}
  %r = ga.grouped_matmul group_ids %x, %w ends %ids into %y : tensor<12x8xf32>, tensor<8x16xf32>, tensor<12xi64> into tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}
