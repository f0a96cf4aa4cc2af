// RUN: ga-opt %s -canonicalize -split-input-file | FileCheck %s

// ga.accumulate of a splat of the combiner's neutral element folds to the
// accumulator; any other constant is kept.

// CHECK-LABEL: func.func @add_zero
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4x8xf32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         return %[[ACC]]
func.func @add_zero(%acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %0 = ga.accumulate <add> %z into %acc : tensor<4x8xf32> into tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @add_negative_zero
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4xf32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         return %[[ACC]]
func.func @add_negative_zero(%acc: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<-0.0> : tensor<4xf32>
  %0 = ga.accumulate <add> %z into %acc : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @mul_one
// CHECK-SAME:    (%[[ACC:.*]]: tensor<f32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         return %[[ACC]]
func.func @mul_one(%acc: tensor<f32>) -> tensor<f32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %0 = ga.accumulate <mul> %one into %acc : tensor<f32> into tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @max_minus_inf
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4xf32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         return %[[ACC]], %[[ACC]]
func.func @max_minus_inf(%acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %ninf = arith.constant dense<0xFF800000> : tensor<4xf32>
  %0 = ga.accumulate <maxnumf> %ninf into %acc : tensor<4xf32> into tensor<4xf32>
  %1 = ga.accumulate <maximumf> %ninf into %acc : tensor<4xf32> into tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @min_plus_inf
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4xf32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         return %[[ACC]], %[[ACC]]
func.func @min_plus_inf(%acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %inf = arith.constant dense<0x7F800000> : tensor<4xf32>
  %0 = ga.accumulate <minnumf> %inf into %acc : tensor<4xf32> into tensor<4xf32>
  %1 = ga.accumulate <minimumf> %inf into %acc : tensor<4xf32> into tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// Integer combiners: 0 for add/or/xor/maxui, 1 for mul, all ones for
// and/minui, the signed extremes for maxsi/minsi.
// CHECK-LABEL: func.func @integer_neutral
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<4xi1>)
// CHECK-NOT:     ga.accumulate
// CHECK:         return %[[ACC]], %[[ACC]], %[[ACC]], %[[ACC]], %[[ACC]], %[[ACC]], %[[ACC]], %[[B]], %[[B]], %[[B]]
func.func @integer_neutral(%acc: tensor<4xi32>, %b: tensor<4xi1>)
    -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %zero = arith.constant dense<0> : tensor<4xi32>
  %one = arith.constant dense<1> : tensor<4xi32>
  %ones = arith.constant dense<-1> : tensor<4xi32>
  %smin = arith.constant dense<-2147483648> : tensor<4xi32>
  %smax = arith.constant dense<2147483647> : tensor<4xi32>
  %false = arith.constant dense<false> : tensor<4xi1>
  %true = arith.constant dense<true> : tensor<4xi1>
  %0 = ga.accumulate <add> %zero into %acc : tensor<4xi32> into tensor<4xi32>
  %1 = ga.accumulate <maxui> %zero into %acc : tensor<4xi32> into tensor<4xi32>
  %2 = ga.accumulate <mul> %one into %acc : tensor<4xi32> into tensor<4xi32>
  %3 = ga.accumulate <and> %ones into %acc : tensor<4xi32> into tensor<4xi32>
  %4 = ga.accumulate <minui> %ones into %acc : tensor<4xi32> into tensor<4xi32>
  %5 = ga.accumulate <maxsi> %smin into %acc : tensor<4xi32> into tensor<4xi32>
  %6 = ga.accumulate <minsi> %smax into %acc : tensor<4xi32> into tensor<4xi32>
  %7 = ga.accumulate <or> %false into %b : tensor<4xi1> into tensor<4xi1>
  %8 = ga.accumulate <xor> %false into %b : tensor<4xi1> into tensor<4xi1>
  %9 = ga.accumulate <and> %true into %b : tensor<4xi1> into tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Constants that are not the neutral element of the combiner stay.
// CHECK-LABEL: func.func @not_neutral
// CHECK-COUNT-8: ga.accumulate
// CHECK-NOT:     ga.accumulate
func.func @not_neutral(%acc: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %inf = arith.constant dense<0x7F800000> : tensor<4xf32>
  %izero = arith.constant dense<0> : tensor<4xi32>
  %ione = arith.constant dense<1> : tensor<4xi32>
  // 1 is not neutral for add, 0 not for mul, +inf not for max, 0 not for min.
  %0 = ga.accumulate <add> %one into %acc : tensor<4xf32> into tensor<4xf32>
  %1 = ga.accumulate <mul> %zero into %acc : tensor<4xf32> into tensor<4xf32>
  %2 = ga.accumulate <maxnumf> %inf into %acc : tensor<4xf32> into tensor<4xf32>
  %3 = ga.accumulate <minnumf> %zero into %acc : tensor<4xf32> into tensor<4xf32>
  // 0 is not neutral for and/minui/maxsi; 1 not for add.
  %4 = ga.accumulate <and> %izero into %i : tensor<4xi32> into tensor<4xi32>
  %5 = ga.accumulate <minui> %izero into %i : tensor<4xi32> into tensor<4xi32>
  %6 = ga.accumulate <maxsi> %izero into %i : tensor<4xi32> into tensor<4xi32>
  %7 = ga.accumulate <add> %ione into %i : tensor<4xi32> into tensor<4xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// A non-splat constant or a value that is not a constant stays.
// CHECK-LABEL: func.func @not_splat
// CHECK:         ga.accumulate <add>
// CHECK:         ga.accumulate <add>
func.func @not_splat(%acc: tensor<2xf32>, %p: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = ga.accumulate <add> %c into %acc : tensor<2xf32> into tensor<2xf32>
  %1 = ga.accumulate <add> %p into %acc : tensor<2xf32> into tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Chains of neutral accumulations fold to the original accumulator; the
// all-reduce is a collective and is never folded or erased, even unused.
// CHECK-LABEL: func.func @chain_and_collective
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4xf32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         %[[R:.*]] = ga.all_reduce <sum> %[[ACC]] : tensor<4xf32>
// CHECK:         ga.all_reduce <mean> %[[R]] : tensor<4xf32>
// CHECK:         return %[[R]]
func.func @chain_and_collective(%acc: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %0 = ga.accumulate <add> %z into %acc : tensor<4xf32> into tensor<4xf32>
  %1 = ga.accumulate <add> %z into %0 : tensor<4xf32> into tensor<4xf32>
  %2 = ga.all_reduce <sum> %1 : tensor<4xf32>
  %unused = ga.all_reduce <mean> %2 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// An unused ga.accumulate is pure and is erased.
// CHECK-LABEL: func.func @dead_accumulate
// CHECK-NOT:     ga.accumulate
func.func @dead_accumulate(%p: tensor<4xf32>, %acc: tensor<4xf32>) {
  %0 = ga.accumulate <add> %p into %acc : tensor<4xf32> into tensor<4xf32>
  return
}

// -----

// A narrower neutral partial folds too: the result has the accumulator's type.
// CHECK-LABEL: func.func @narrow_neutral
// CHECK-SAME:    (%[[ACC:.*]]: tensor<4xf32>)
// CHECK-NEXT:    return %[[ACC]]
func.func @narrow_neutral(%acc: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xbf16>
  %0 = ga.accumulate <add> %z into %acc : tensor<4xbf16> into tensor<4xf32>
  return %0 : tensor<4xf32>
}
