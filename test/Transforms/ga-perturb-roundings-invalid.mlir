// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-perturb-roundings
// RUN: not ga-opt %s --ga-perturb-roundings="func=nope" 2>&1 | FileCheck %s --check-prefix=FUNC

// FUNC: error: no function named 'nope'

// The name of the added function is taken.
// expected-error@+1 {{a symbol named 'taken_perturbed' exists already}}
func.func @taken(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
func.func private @taken_perturbed(%x: f32, %seed: i64) -> f32

// -----

// Unstructured control flow is not followed.
// expected-error@+1 {{@blocks has several blocks; only structured control flow is followed}}
func.func @blocks(%x: f32, %c: i1) -> f32 {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : f32
^b:
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
