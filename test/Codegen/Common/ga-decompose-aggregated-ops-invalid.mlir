// RUN: ga-opt %s -ga-decompose-aggregated-ops -split-input-file -verify-diagnostics
// RUN: not ga-opt %s -ga-decompose-aggregated-ops 2>&1 | FileCheck %s

// The decomposition builds tensors: a softmax on buffers is refused at its
// location, and the pass fails.
// CHECK: ga-decompose-aggregated-ops-invalid.mlir:[[@LINE+4]]:3: error: 'linalg.softmax' op cannot be decomposed on buffers

func.func @on_buffers(%x: memref<5x4xf32>, %y: memref<5x4xf32>) {
  // expected-error @+1 {{'linalg.softmax' op cannot be decomposed on buffers: decompose it before bufferization}}
  linalg.softmax dimension(1) ins(%x : memref<5x4xf32>) outs(%y : memref<5x4xf32>)
  return
}
