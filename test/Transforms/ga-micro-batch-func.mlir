// RUN: ga-opt %s -ga-micro-batch="micro-batches=2 func=selected" | FileCheck %s
// RUN: not ga-opt %s -ga-micro-batch="micro-batches=2 func=no_batch" 2>&1 | FileCheck %s --check-prefix=NOBATCH

// Only the functions named by `func` are rewritten.
// CHECK-LABEL: func.func @selected(
// CHECK:         scf.for
// CHECK-LABEL: func.func @other(
// CHECK-NOT:     scf.for
// CHECK:         linalg.reduce

// NOBATCH: error: training step 'no_batch' has no per-sample argument: mark the batch dimension of each with `ga.batch = <dim> : i64` or name them with the `batch-args` option

func.func @selected(%x: tensor<4xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<4xf32>) outs(%e : tensor<f32>) dimensions = [0]
  return %s : tensor<f32>
}

func.func @other(%x: tensor<4xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<4xf32>) outs(%e : tensor<f32>) dimensions = [0]
  return %s : tensor<f32>
}

func.func @no_batch(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
