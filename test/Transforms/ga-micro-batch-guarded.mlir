// RUN: ga-opt %s -ga-micro-batch="micro-batches=4" | FileCheck %s

// A gradient reduction inside an scf.if on a hyper-parameter flag (%train):
// the flag does not depend on the samples, so every micro-batch takes the
// full batch's branch. The loop body re-creates the branch on the same flag:
// its per-sample work and the reduction of this micro-batch, accumulated
// into a loop-carried value that starts from zero (the other branch passes
// it through). The scf.if itself follows the loop: in its branch, the
// reduction is replaced by the loop's result combined with the original
// init (%g, the previous gradient), and the update after it is unchanged.
// CHECK-LABEL: func.func @flagged_gradient(
// CHECK-SAME:      %[[W:[^:]*]]: tensor<4x3xf32>, %[[G:[^:]*]]: tensor<4x3xf32>, %[[LR:[^:]*]]: f32, %[[TRAIN:[^:]*]]: i1, %[[X:[^:]*]]: tensor<8x4xf32>
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[LOOP:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<4x3xf32>)
// CHECK:           %[[XS:.*]] = tensor.extract_slice %[[X]]
// CHECK:           %[[H:.*]] = linalg.matmul ins(%[[XS]], %[[W]] : tensor<2x4xf32>, tensor<4x3xf32>)
// CHECK:           %[[IF:.*]] = scf.if %[[TRAIN]] -> (tensor<4x3xf32>) {
// CHECK:             %[[T:.*]] = linalg.mul ins(%[[H]], %[[H]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:             %[[P:.*]] = linalg.generic {{.*}} ins(%[[XS]], %[[T]] : tensor<2x4xf32>, tensor<2x3xf32>)
// CHECK:             %[[SUM:.*]] = ga.accumulate <add> %[[P]] into %[[ACC]]
// CHECK:             scf.yield %[[SUM]]
// CHECK:           } else {
// CHECK:             scf.yield %[[ACC]]
// CHECK:           }
// CHECK:           scf.yield %[[IF]]
// CHECK:         %[[R:.*]]:2 = scf.if %[[TRAIN]] -> (tensor<4x3xf32>, tensor<4x3xf32>) {
// CHECK-NOT:       linalg.matmul
// CHECK:           %[[DW:.*]] = ga.accumulate <add> %[[LOOP]] into %[[G]]
// CHECK:           %[[UPD:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[DW]] :
// CHECK:           scf.yield %[[UPD]], %[[DW]]
// CHECK:         } else {
// CHECK:           scf.yield %[[W]], %[[G]]
// CHECK:         return %[[R]]#0, %[[R]]#1
#id = affine_map<(i, j) -> (i, j)>
func.func @flagged_gradient(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %lr: f32, %train: i1, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  %wn, %gn = scf.if %train -> (tensor<4x3xf32>, tensor<4x3xf32>) {
    %t = linalg.mul ins(%h, %h : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
    %dw = linalg.generic {indexing_maps = [affine_map<(i, j, b) -> (b, i)>, affine_map<(i, j, b) -> (b, j)>, affine_map<(i, j, b) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %t : tensor<8x4xf32>, tensor<8x3xf32>) outs(%g : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    %ew = tensor.empty() : tensor<4x3xf32>
    %upd = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %dw : tensor<4x3xf32>, tensor<4x3xf32>) outs(%ew : tensor<4x3xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %s = arith.mulf %d, %lr : f32
      %n = arith.subf %a, %s : f32
      linalg.yield %n : f32
    } -> tensor<4x3xf32>
    scf.yield %upd, %dw : tensor<4x3xf32>, tensor<4x3xf32>
  } else {
    scf.yield %w, %g : tensor<4x3xf32>, tensor<4x3xf32>
  }
  return %wn, %gn : tensor<4x3xf32>, tensor<4x3xf32>
}
