// RUN: ga-opt %s -split-input-file -ga-micro-batch="micro-batches=2" | FileCheck %s

// The nll_loss gather of torch-mlir: the captured per-sample logits are the
// micro-batch's own (computed in the loop body), read at the local position
// of the sample (linalg.index 0 itself); the label index is data.
// CHECK-LABEL: func.func @gather
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:           %[[OFF:.*]] = arith.muli %[[IV]], %{{.*}} : index
// CHECK:           %[[LOGITS:.*]] = linalg.matmul ins(%{{.*}} : tensor<4x4xf32>, tensor<4x5xf32>)
// CHECK:           linalg.generic
// CHECK-SAME:        ins(%{{.*}} : tensor<4xi64>)
// CHECK:             %[[B:.*]] = linalg.index 0 : index
// CHECK:             %[[L:.*]] = arith.index_cast
// CHECK:             tensor.extract %[[LOGITS]][%[[B]], %[[L]]] : tensor<4x5xf32>
func.func @gather(%w: tensor<4x5xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}, %y: tensor<8xi64> {ga.batch = 0 : i64}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x5xf32>) outs(%z : tensor<8x5xf32>) -> tensor<8x5xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %nll = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y : tensor<8xi64>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%l: i64, %o: f32):
    %i = linalg.index 0 : index
    %li = arith.index_cast %l : i64 to index
    %v = tensor.extract %logits[%i, %li] : tensor<8x5xf32>
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%nll : tensor<8xf32>) outs(%zs : tensor<f32>) dimensions = [0]
  return %s : tensor<f32>
}

// -----

// A captured per-sample argument is sliced to the micro-batch like an
// operand; the same linalg.index stays global where it indexes something
// else (a uniform per-position table, read whole).
// CHECK-LABEL: func.func @captured_argument
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:           %[[OFF:.*]] = arith.muli %[[IV]], %{{.*}} : index
// CHECK-DAG:       %[[Y:.*]] = tensor.extract_slice %{{.*}}[%[[OFF]]] [4] [1] : tensor<8xi64> to tensor<4xi64>
// CHECK:           linalg.generic
// CHECK:             %[[B:.*]] = linalg.index 0 : index
// CHECK:             %[[G:.*]] = arith.addi %[[B]], %[[OFF]] : index
// CHECK:             tensor.extract %[[Y]][%[[B]]] : tensor<4xi64>
// CHECK:             tensor.extract %{{.*}}[%[[G]]] : tensor<8xf32>
func.func @captured_argument(%t: tensor<8xf32>, %x: tensor<8x5xf32> {ga.batch = 0 : i64}, %y: tensor<8xi64> {ga.batch = 0 : i64}) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, c) -> (b, c)>, affine_map<(b, c) -> (c)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<8x5xf32>) outs(%z : tensor<5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %b = linalg.index 0 : index
    %c = linalg.index 1 : index
    %label = tensor.extract %y[%b] : tensor<8xi64>
    %li = arith.index_cast %label : i64 to index
    %hit = arith.cmpi eq, %c, %li : index
    %onehot = arith.select %hit, %one, %zero : f32
    %tb = tensor.extract %t[%b] : tensor<8xf32>
    %d = arith.subf %v, %onehot : f32
    %m = arith.mulf %d, %tb : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<5xf32>
  return %g : tensor<5xf32>
}
