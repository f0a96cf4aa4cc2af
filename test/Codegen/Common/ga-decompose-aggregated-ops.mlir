// RUN: ga-opt %s -ga-decompose-aggregated-ops -split-input-file | FileCheck %s

// A softmax over the last dimension: a max reduction, exp(x - max), a sum
// reduction and a division, all generics on tensors; no softmax is left.
// CHECK-LABEL: func.func @softmax_last
// CHECK-SAME:      (%[[X:.*]]: tensor<5x4xf32>)
// CHECK-NOT:     linalg.softmax
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[X]] : tensor<5x4xf32>)
// CHECK:           arith.maxnumf
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<5x4xf32>, tensor<5xf32>)
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[EXP]] : tensor<5x4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<5x4xf32>, tensor<5xf32>)
// CHECK:           arith.divf
// CHECK:         return %[[R]]
func.func @softmax_last(%x: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %e = tensor.empty() : tensor<5x4xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<5x4xf32>) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
  return %s : tensor<5x4xf32>
}

// -----

// Over a middle dimension of a dynamically shaped tensor: the reductions
// drop that dimension only.
// CHECK-LABEL: func.func @softmax_dynamic_middle
// CHECK-NOT:     linalg.softmax
// CHECK:         tensor.empty(%{{.*}}) : tensor<?x7xf64>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:           arith.maxnumf %{{.*}}, %{{.*}} : f64
// CHECK:         math.exp %{{.*}} : f64
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         return %{{.*}} : tensor<?x3x7xf64>
func.func @softmax_dynamic_middle(%x: tensor<?x3x7xf64>) -> tensor<?x3x7xf64> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x3x7xf64>
  %e = tensor.empty(%b) : tensor<?x3x7xf64>
  %s = linalg.softmax dimension(1) ins(%x : tensor<?x3x7xf64>) outs(%e : tensor<?x3x7xf64>) -> tensor<?x3x7xf64>
  return %s : tensor<?x3x7xf64>
}

// -----

// Inside a region (an scf.for body): decomposed in place.
// CHECK-LABEL: func.func @softmax_in_loop
// CHECK:         scf.for
// CHECK-NOT:       linalg.softmax
// CHECK:           math.exp
// CHECK:           scf.yield
func.func @softmax_in_loop(%x: tensor<2x8xf32>, %n: index) -> tensor<2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<2x8xf32>) {
    %e = tensor.empty() : tensor<2x8xf32>
    %s = linalg.softmax dimension(1) ins(%a : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
    scf.yield %s : tensor<2x8xf32>
  }
  return %r : tensor<2x8xf32>
}
