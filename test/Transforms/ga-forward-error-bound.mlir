// RUN: ga-opt %s --ga-forward-error-bound --split-input-file | FileCheck %s
// RUN: ga-opt %s --ga-forward-error-bound="func=sum suffix=_b" | FileCheck %s --check-prefix=OPTS

// An elementwise sum: the original is kept; the bound function returns the
// sum and u|r| (u = 2^-24; 0 where r is infinite: inf arithmetic is exact)
// beside it, from the same generic.
// CHECK-LABEL: func.func @sum(
// CHECK:         arith.addf %{{.*}} : tensor<4xf32>
// CHECK-LABEL: func.func @sum_error_bound(
// CHECK-SAME:      -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK:           %[[S:.*]] = arith.addf
// CHECK:           %[[M:.*]] = math.absf %[[S]]
// CHECK:           %[[FIN:.*]] = arith.cmpf one, %[[M]]
// CHECK:           %[[U:.*]] = arith.constant 5.96046448E-8 : f32
// CHECK:           %[[UM:.*]] = arith.mulf %[[U]], %[[M]]
// CHECK:           %[[E:.*]] = arith.select %[[FIN]], %[[UM]]
// CHECK:           linalg.yield %[[S]], %[[E]] : f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1
// OPTS-LABEL: func.func @sum_b(
// OPTS-NOT: func.func @{{.*}}_b(
func.func @sum(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @other(%a: f32) -> f32 {
  return %a : f32
}

// -----

// A product reduced over 8 terms: each term adds K u |x| (K = 8) to the
// accumulator's bound, a bound for every order of the sum.
// CHECK-LABEL: func.func @mm_error_bound(
// CHECK:         %[[K:.*]] = arith.constant 8.000000e+00 : f64
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.addf %{{.*}}, %[[P]] : f32
// CHECK:           %[[KF:.*]] = arith.truncf %[[K]] : f64 to f32
// CHECK:           %[[KU:.*]] = arith.mulf %[[KF]], %{{.*}} : f32
// CHECK:           linalg.yield
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}

// -----

// A quotient divides by |b| - e(b), and is unbounded (+inf) where that is not
// positive; a log likewise by |a| - e(a).
// CHECK-LABEL: func.func @quotient_error_bound(
// CHECK:         arith.divf
// CHECK:         %[[DEN:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK:         %[[POS:.*]] = arith.cmpf ogt, %[[DEN]]
// CHECK:         %[[Q:.*]] = arith.divf %{{.*}}, %[[DEN]] : f32
// CHECK:         arith.select %[[POS]], %[[Q]], %{{.*}} : f32
// CHECK:         math.log
func.func @quotient(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  %q = arith.divf %a, %s : f32
  %l = math.log %q : f32
  return %l : f32
}

// -----

// A comparison of inexact values gives a flag: true where the operands are
// closer than their bounds. The i1 result's companion is that flag.
// CHECK-LABEL: func.func @compare_error_bound(
// CHECK-SAME:      -> (tensor<4xi1>, tensor<4xi1>)
// CHECK:         linalg.generic
// CHECK:           %[[C:.*]] = arith.cmpf ogt
// CHECK:           %[[D:.*]] = arith.subf
// CHECK:           %[[G:.*]] = math.absf %[[D]]
// CHECK:           %[[F:.*]] = arith.cmpf ole, %[[G]]
// CHECK:           linalg.yield %[[C]], %[[F]] : i1, i1
func.func @compare(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %s = arith.mulf %x, %y : tensor<4xf32>
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %c = arith.cmpf ogt, %s, %z : tensor<4xf32>
  return %c : tensor<4xi1>
}

// -----

// Data movement applies the same op to the bounds; an exact argument has
// none (a zero bound is materialized only where a result needs one).
// CHECK-LABEL: func.func @slices_error_bound(
// CHECK:         %[[S:.*]]:2 = linalg.generic
// CHECK:         tensor.extract_slice %[[S]]#0[0] [2] [1]
// CHECK:         tensor.extract_slice %[[S]]#1[0] [2] [1]
// CHECK:         tensor.extract_slice %{{.*}}[2] [2] [1]
// CHECK-NOT:     tensor.extract_slice
// CHECK:         return
func.func @slices(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %s = arith.mulf %x, %x : tensor<4xf32>
  %a = tensor.extract_slice %s[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %b = tensor.extract_slice %x[2] [2] [1] : tensor<4xf32> to tensor<2xf32>
  return %a, %b : tensor<2xf32>, tensor<2xf32>
}

// -----

// scf.for carries a bound beside each float iteration argument.
// CHECK-LABEL: func.func @loop_error_bound(
// CHECK:         %[[L:.*]]:2 = scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[E:.*]] = %{{.*}}) -> (f32, f32)
// CHECK:           arith.mulf %[[A]], %{{.*}} : f32
// CHECK:           scf.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK:         return %[[L]]#0, %[[L]]#1 : f32, f32
func.func @loop(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (f32) {
    %m = arith.mulf %a, %x : f32
    scf.yield %m : f32
  }
  return %r : f32
}
