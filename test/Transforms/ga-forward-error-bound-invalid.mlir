// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-forward-error-bound
// RUN: not ga-opt %s --ga-forward-error-bound="func=nope" 2>&1 | FileCheck %s --check-prefix=FUNC

// FUNC: error: no function named 'nope'

// Calls are not followed: the callee's rounding would be missed.
func.func private @helper(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
func.func @calls(%x: f32) -> f32 {
  // expected-error@+1 {{calls are not followed by the error bound: inline the callee first (--inline)}}
  %y = func.call @helper(%x) : (f32) -> f32
  return %y : f32
}

// -----

// The bits of an inexact float say nothing bounded about the integer.
func.func @bitcast(%x: f32, %y: f32) -> i32 {
  %s = arith.addf %x, %y : f32
  // expected-error@+1 {{no error bound through a bitcast of an inexact value}}
  %b = arith.bitcast %s : f32 to i32
  return %b : i32
}

// -----

// A loop whose trip count depends on its body is not followed.
func.func @while(%x: f32) -> f32 {
  %c = arith.constant 1.0 : f32
  // expected-error@+1 {{no error-bound rule for 'scf.while'}}
  %r = scf.while (%a = %x) : (f32) -> f32 {
    %s = arith.addf %a, %c : f32
    %lt = arith.cmpf olt, %s, %c : f32
    scf.condition(%lt) %s : f32
  } do {
  ^bb0(%b: f32):
    scf.yield %b : f32
  }
  return %r : f32
}

// -----

// A math function without a rule is refused at the op.
func.func @cbrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{no error-bound rule for 'math.cbrt'}}
  %y = math.cbrt %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The name of the added function is taken.
// expected-error@+1 {{a symbol named 'taken_error_bound' exists already}}
func.func @taken(%x: f32) -> f32 {
  return %x : f32
}
func.func private @taken_error_bound(%x: f32) -> f32
