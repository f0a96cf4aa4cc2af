// RUN: not ga-opt %s -ga-mark-batch-args="batch-args=1:x" 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not ga-opt %s -ga-mark-batch-args="batch-args=5" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not ga-opt %s -ga-mark-batch-args="func=nope batch-args=0" 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not ga-opt %s -ga-mark-batch-args="batch-args=0:2" 2>&1 | FileCheck %s --check-prefix=DIM
// RUN: not ga-opt %s -ga-mark-batch-args="batch-args=1" 2>&1 | FileCheck %s --check-prefix=SCALAR

// MALFORMED: error: ga-mark-batch-args: malformed batch-args entry '1:x'; expected 'index' or 'index:dim'
// RANGE: error: ga-mark-batch-args: argument index 5 is out of range (the function has 2 arguments)
// FUNC: error: ga-mark-batch-args: no function named 'nope'
// DIM: error: 'func.func' op argument #0: batch dimension 2 is out of range for 'tensor<32x4xf32>'
// SCALAR: error: 'func.func' op argument #1: 'ga.batch' needs a ranked tensor or memref of rank >= 1, got 'f32'

func.func @step(%x: tensor<32x4xf32>, %lr: f32) {
  return
}
