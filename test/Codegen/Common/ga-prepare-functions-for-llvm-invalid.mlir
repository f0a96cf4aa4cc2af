// RUN: not ga-opt %s -ga-prepare-functions-for-llvm 2>&1 | FileCheck %s
// RUN: ga-opt %s -ga-prepare-functions-for-llvm -verify-diagnostics

// The pass only drops attributes and has no error of its own; a malformed
// ga attribute is refused by the dialect's verifier, at its function, before
// the pass runs.
// CHECK: ga-prepare-functions-for-llvm-invalid.mlir:[[@LINE+3]]:1: error: 'func.func' op argument #0: 'ga.init' must be one of

// expected-error @+1 {{argument #0: 'ga.init' must be one of}}
func.func @step(%x: memref<8xf32> {ga.init = "gaussian"}) {
  return
}
