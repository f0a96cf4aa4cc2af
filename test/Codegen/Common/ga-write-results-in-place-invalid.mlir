// RUN: ga-opt %s --ga-write-results-in-place="pairs=0:1" -verify-diagnostics
// RUN: not ga-opt %s --ga-write-results-in-place="pairs=2:0" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not ga-opt %s --ga-write-results-in-place="pairs=0:0,0:0" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not ga-opt %s --ga-write-results-in-place="pairs=zero" 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not ga-opt %s --ga-write-results-in-place="func=nosuch pairs=0:0" 2>&1 | FileCheck %s --check-prefix=NOFUNC

// Result 0 (tensor<4xf32>) into argument 1 (tensor<8x4xf32>): the types differ.
// expected-error @+1 {{ga-write-results-in-place: result 0 ('tensor<4xf32>') cannot be written into argument 1 ('tensor<8x4xf32>'): the types must be the same ranked tensor}}
func.func @train_step(%w: tensor<4xf32>, %x: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %w, %c : tensor<4xf32>, tensor<f32>
}

// RANGE: error: ga-write-results-in-place: pair 2:0 out of range: @train_step has 2 results and 2 arguments
// TWICE: error: ga-write-results-in-place: result 0 or argument 0 is named twice
// SYNTAX: error: ga-write-results-in-place: 'zero' is not a result:argument pair
// NOFUNC: error: ga-write-results-in-place: no function @nosuch with a body
