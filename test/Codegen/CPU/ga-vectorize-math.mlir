// RUN: ga-opt %s -ga-vectorize-math | FileCheck %s
// RUN: ga-opt %s -ga-vectorize-math="ops=tanh" | FileCheck %s --check-prefix=TANH
// RUN: ga-opt %s -ga-vectorize-math="scalars=1" | FileCheck %s --check-prefix=SCALARS
// RUN: ga-opt %s -ga-vectorize-math="ops=exp" | FileCheck %s --check-prefix=EXP
// RUN: ga-opt %s -ga-vectorize-math="ops=erfc,expm1" | FileCheck %s --check-prefix=INNER

// The default functions on f32 vectors become vector arithmetic; scalars,
// f64 vectors and log (not in the default set) keep their math op (libm).

// CHECK-LABEL: func.func @gelu_softmax
// CHECK-NOT: math.exp {{.*}}vector<8xf32>
// CHECK-NOT: math.erf {{.*}}vector<8xf32>
// CHECK-NOT: math.tanh {{.*}}vector<8xf32>
// CHECK-DAG: math.exp %{{.*}} : f32
// CHECK-DAG: math.exp %{{.*}} : vector<4xf64>
// CHECK-DAG: math.log %{{.*}} : vector<8xf32>
// CHECK-DAG: arith.mulf {{.*}} : vector<8xf32>
// CHECK: return

// Only tanh when asked for tanh.
// TANH-LABEL: func.func @gelu_softmax
// TANH-NOT: math.tanh {{.*}}vector<8xf32>
// TANH-DAG: math.exp %{{.*}} : vector<8xf32>
// TANH-DAG: math.erf %{{.*}} : vector<8xf32>
// With scalars, the f32 scalar exp takes the approximation too (one
// implementation of exp in the function); f64 and log still keep libm.
// SCALARS-LABEL: func.func @gelu_softmax
// SCALARS-NOT: math.exp {{.*}} : f32
// SCALARS-NOT: math.exp {{.*}}vector<8xf32>
// SCALARS-DAG: math.exp %{{.*}} : vector<4xf64>
// SCALARS-DAG: math.log %{{.*}} : vector<8xf32>
// SCALARS-DAG: math.fma {{.*}} : f32
// SCALARS: return
func.func @gelu_softmax(%x: vector<8xf32>, %s: f32, %d: vector<4xf64>)
    -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, f32,
        vector<4xf64>) {
  %e = math.exp %x : vector<8xf32>
  %r = math.erf %x : vector<8xf32>
  %t = math.tanh %x : vector<8xf32>
  %l = math.log %x : vector<8xf32>
  %es = math.exp %s : f32
  %ed = math.exp %d : vector<4xf64>
  return %e, %r, %t, %l, %es, %ed : vector<8xf32>, vector<8xf32>,
      vector<8xf32>, vector<8xf32>, f32, vector<4xf64>
}

// A scalar tanh with scalars: through exp, as on vectors (no tanh left, no
// libm call), its constants scalars.
// SCALARS-LABEL: func.func @scalar_tanh
// SCALARS-NOT: math.tanh
// SCALARS-NOT: math.exp
// SCALARS: math.copysign {{.*}} : f32
// CHECK-LABEL: func.func @scalar_tanh
// CHECK: math.tanh %{{.*}} : f32
func.func @scalar_tanh(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

// exp (ExpThroughPowersOfTwo): x clamped, k = roundeven(x log2 e), r by two
// fmas, the Taylor series to r^7 by Horner, 2^k as two exponent-bit floats,
// NaN passed through.
// EXP-LABEL: func.func @exp_vector
// EXP-NOT: math.exp
// EXP: %[[LO:.*]] = arith.maxnumf %[[X:.*]], %{{.*}} : vector<8xf32>
// EXP: %[[C:.*]] = arith.minnumf %[[LO]], %{{.*}} : vector<8xf32>
// EXP: %[[K:.*]] = math.roundeven %{{.*}} : vector<8xf32>
// EXP: %[[R0:.*]] = math.fma %[[K]], %{{.*}}, %[[C]]
// EXP: %[[R:.*]] = math.fma %[[K]], %{{.*}}, %[[R0]]
// EXP-COUNT-5: math.fma %{{.*}}, %[[R]], %{{.*}}
// EXP: %[[KI:.*]] = arith.fptosi %[[K]] : vector<8xf32> to vector<8xi32>
// EXP: %[[K1:.*]] = arith.shrsi %[[KI]]
// EXP: arith.subi %[[KI]], %[[K1]]
// EXP-COUNT-2: arith.shli
// EXP: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// EXP: arith.select %[[NAN]], %[[X]], %{{.*}} : vector<8xi1>, vector<8xf32>
// EXP: math.exp %{{.*}} : f32
func.func @exp_vector(%x: vector<8xf32>, %s: f32) -> (vector<8xf32>, f32) {
  %e = math.exp %x : vector<8xf32>
  %es = math.exp %s : f32
  return %e, %es : vector<8xf32>, f32
}

// erfc and expm1 are written with exp, which takes ExpThroughPowersOfTwo
// too: no math.exp is left, and no libm call.
// INNER-LABEL: func.func @exp_inside
// INNER-NOT: math.exp
// INNER-NOT: math.erfc
// INNER-NOT: math.expm1
// INNER-COUNT-2: math.roundeven
// INNER: return
func.func @exp_inside(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %a = math.expm1 %x : vector<8xf32>
  %b = math.erfc %x : vector<8xf32>
  return %a, %b : vector<8xf32>, vector<8xf32>
}
