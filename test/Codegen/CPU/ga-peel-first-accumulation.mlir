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
