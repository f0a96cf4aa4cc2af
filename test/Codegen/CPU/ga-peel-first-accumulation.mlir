// RUN: ga-opt %s -ga-peel-first-accumulation | FileCheck %s
// RUN: ga-opt %s -ga-peel-first-accumulation -canonicalize | FileCheck %s --check-prefix=CANON

// The first micro-batch's product writes into the zero fill; the loop runs
// the other three.
// CHECK-LABEL: func.func @acc
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[FIRST:.*]] = scf.for %{{.*}} = %[[C0]] to %[[ONE]] step %{{.*}} iter_args(%[[A0:.*]] = %[[Z]])
// CHECK:           linalg.matmul {{.*}} outs(%[[A0]] : tensor<4x3xf32>)
// CHECK:         scf.for %{{.*}} = %[[ONE]] to %[[C4]] step %{{.*}} iter_args(%[[A:.*]] = %[[FIRST]])
// CHECK:           linalg.matmul {{.*}} outs(%[[A]] : tensor<4x3xf32>)

// CANON-LABEL: func.func @acc
// CANON:         %[[Z:.*]] = linalg.fill
// CANON:         %[[P0:.*]] = linalg.matmul {{.*}} outs(%[[Z]] : tensor<4x3xf32>)
// CANON:         scf.for {{.*}} iter_args(%{{.*}} = %[[P0]])
func.func @acc(%a: tensor<4x4x5xf32>, %b: tensor<4x5x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
    %ai = tensor.extract_slice %a[%i, 0, 0] [1, 4, 5] [1, 1, 1] : tensor<4x4x5xf32> to tensor<4x5xf32>
    %bi = tensor.extract_slice %b[%i, 0, 0] [1, 5, 3] [1, 1, 1] : tensor<4x5x3xf32> to tensor<5x3xf32>
    %p = linalg.matmul ins(%ai, %bi : tensor<4x5xf32>, tensor<5x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %p : tensor<4x3xf32>
  }
  return %g : tensor<4x3xf32>
}

// A micro-batch of a run-time size (a data-parallel rank's: %m rows, at
// most 4): not peeled. The first micro-batch's temporaries would be held
// through the loop beside the loop's own, which no sharing can give their
// storage.
// CHECK-LABEL: func.func @run_time_rows
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK-NOT:     scf.for
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK-NOT:     scf.for
func.func @run_time_rows(%a: tensor<16x5xf32>, %b: tensor<5x3xf32>,
                         %m: index) -> tensor<5x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> tensor<5x3xf32> {
    %start = arith.muli %i, %c4 : index
    %ai = tensor.extract_slice %a[%start, 0] [%m, 5] [1, 1] : tensor<16x5xf32> to tensor<?x5xf32>
    %bi = tensor.extract_slice %b[0, 0] [%m, 3] [1, 1] : tensor<5x3xf32> to tensor<?x3xf32>
    %p = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%ai, %bi : tensor<?x5xf32>, tensor<?x3xf32>)
        outs(%acc : tensor<5x3xf32>) -> tensor<5x3xf32>
    scf.yield %p : tensor<5x3xf32>
  }
  return %g : tensor<5x3xf32>
}
