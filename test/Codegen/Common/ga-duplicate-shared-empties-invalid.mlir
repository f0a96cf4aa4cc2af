// RUN: not ga-opt %s -ga-duplicate-shared-empties="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: ga-opt %s -ga-duplicate-shared-empties="max-uses=0" -verify-diagnostics

// An unknown option is refused by the option parser.
// OPTION: no such option bogus

// max-uses=0 would leave no use with an empty: refused, at the function.
// expected-error @below {{ga-duplicate-shared-empties: max-uses must be at least 1}}
func.func @shared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.log ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
