// RUN: ga-opt %s -split-input-file -ga-micro-batch="micro-batches=4" | FileCheck %s
// RUN: ga-opt %s -split-input-file -ga-micro-batch="micro-batches=3" | FileCheck %s --check-prefix=REM
// RUN: ga-opt %s -split-input-file -ga-micro-batch="micro-batches=4 dynamic-micro-batches=true" | FileCheck %s --check-prefix=DYN

// A weight gradient and a per-sample result. The uniform prologue stays, the
// per-sample part moves into the loop at micro-batch size, the reduction
// accumulates into a loop-carried value that starts from its original init,
// and the optimizer follows the loop.

// CHECK-LABEL: func.func @sgd(
// CHECK-SAME:      %[[W:.*]]: tensor<4x2xf32>, %[[LR:.*]]: f32, %[[X:.*]]: tensor<8x4xf32> {ga.batch = 0 : i64}, %[[DY:.*]]: tensor<8x2xf32> {ga.batch = 0 : i64})
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[Z:.*]] = linalg.fill {{.*}} -> tensor<4x2xf32>
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[C4]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]], %[[ASM:.*]] = %{{.*}})
// CHECK:           %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           %[[XS:.*]] = tensor.extract_slice %[[X]][%[[OFF]], 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
// CHECK:           %[[DYS:.*]] = tensor.extract_slice %[[DY]][%[[OFF]], 0] [2, 2] [1, 1] : tensor<8x2xf32> to tensor<2x2xf32>
// CHECK:           %[[P:.*]] = linalg.matmul {{.*}} ins(%[[XS]], %[[DYS]] : tensor<2x4xf32>, tensor<2x2xf32>) outs(%[[Z]] : tensor<4x2xf32>)
// CHECK:           %[[NEXT:.*]] = ga.accumulate <add> %[[P]] into %[[ACC]] : tensor<4x2xf32> into tensor<4x2xf32>
// CHECK:           %[[SQ:.*]] = linalg.mul ins(%[[DYS]], %[[DYS]] : tensor<2x2xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:           %[[INS:.*]] = tensor.insert_slice %[[SQ]] into %[[ASM]][%[[OFF]], 0] [2, 2] [1, 1]
// CHECK:           scf.yield %[[NEXT]], %[[INS]]
// CHECK:         %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#0 : tensor<4x2xf32>) outs(%[[W]] : tensor<4x2xf32>)
// CHECK:         return %[[NEW]], %[[LOOP]]#1

// 8 samples in 3 micro-batches: two of 3 samples, then one of 2.
// REM-LABEL: func.func @sgd(
// REM-DAG:     %[[C2:.*]] = arith.constant 2 : index
// REM-DAG:     %[[C1:.*]] = arith.constant 1 : index
// REM-DAG:     %[[START:.*]] = arith.constant 6 : index
// REM:         %[[A:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[C2]]
// REM:           arith.muli %[[I]], %{{.*}}
// REM:           tensor.extract_slice {{.*}} [3, 4] [1, 1] : tensor<8x4xf32> to tensor<3x4xf32>
// REM:         %[[B:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %[[C1]] {{.*}} iter_args(%{{.*}} = %[[A]]#0, %{{.*}} = %[[A]]#1)
// REM:           %[[S:.*]] = arith.muli %[[J]], %{{.*}}
// REM:           %[[OFF:.*]] = arith.addi %[[S]], %[[START]]
// REM:           tensor.extract_slice {{.*}}[%[[OFF]], 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
// REM:         return %{{.*}}, %[[B]]#1

// The number of micro-batches is an extra index argument; sizes are computed
// at run time (q + (i < r) samples from i * q + min(i, r)).
// DYN-LABEL: func.func @sgd(
// DYN-SAME:      %[[N:[a-z0-9]+]]: index)
// DYN:         %[[OK:.*]] = arith.cmpi sge, %[[N]], %{{.*}} : index
// DYN:         cf.assert %[[OK]], "ga: the number of micro-batches must be at least 1"
// DYN:         %[[Q:.*]] = arith.divui %{{.*}}, %[[N]] : index
// DYN:         %[[R:.*]] = arith.remui %{{.*}}, %[[N]] : index
// DYN:         scf.for %[[I:.*]] = %{{.*}} to %[[N]]
// DYN:           %[[LONG:.*]] = arith.cmpi ult, %[[I]], %[[R]] : index
// DYN:           %[[EXTRA:.*]] = arith.select %[[LONG]]
// DYN:           %[[SIZE:.*]] = arith.addi %[[Q]], %[[EXTRA]] : index
// DYN:           %[[BASE:.*]] = arith.muli %[[I]], %[[Q]] : index
// DYN:           %[[SHIFT:.*]] = arith.minui %[[I]], %[[R]] : index
// DYN:           %[[OFF:.*]] = arith.addi %[[BASE]], %[[SHIFT]] : index
// DYN:           tensor.extract_slice %{{.*}}[%[[OFF]], 0] [%[[SIZE]], 4] [1, 1] : tensor<8x4xf32> to tensor<?x4xf32>
func.func @sgd(%w: tensor<4x2xf32>, %lr: f32, %x: tensor<8x4xf32> {ga.batch = 0 : i64},
               %dy: tensor<8x2xf32> {ga.batch = 0 : i64}) -> (tensor<4x2xf32>, tensor<8x2xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<8x4xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %sq = linalg.mul ins(%dy, %dy : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%dw : tensor<4x2xf32>) outs(%w : tensor<4x2xf32>) {
  ^bb0(%g: f32, %p: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<4x2xf32>
  return %w2, %sq : tensor<4x2xf32>, tensor<8x2xf32>
}

// -----

// The mean's normalizer comes from tensor.dim of the batch: it stays the full
// batch size (a constant here) although the loop body works on 2 samples.
// linalg.index along the batch is offset by the micro-batch start.
// CHECK-LABEL: func.func @mean_and_index(
// CHECK-DAG:     %[[B:.*]] = arith.constant 8 : index
// CHECK:         %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:         %[[BF:.*]] = arith.sitofp %[[BI]] : i64 to f32
// CHECK:         %[[LOOP:.*]]:2 = scf.for
// CHECK:           %[[OFF:.*]] = arith.muli
// CHECK:           linalg.generic
// CHECK:             %[[LOCAL:.*]] = linalg.index 0 : index
// CHECK:             %[[GLOBAL:.*]] = arith.addi %[[LOCAL]], %[[OFF]] : index
// CHECK:             arith.index_cast %[[GLOBAL]] : index to i64
// CHECK:           ga.accumulate <maxsi>
// CHECK:           ga.accumulate <add>
// CHECK:         %[[SUM:.*]] = tensor.extract %[[LOOP]]#1[] : tensor<f32>
// CHECK:         arith.divf %[[SUM]], %[[BF]] : f32
func.func @mean_and_index(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> (tensor<i64>, f32) {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<8xf32>
  %bi = arith.index_cast %b : index to i64
  %ei = tensor.empty() : tensor<i64>
  %min = arith.constant -9223372036854775808 : i64
  %zi = linalg.fill ins(%min : i64) outs(%ei : tensor<i64>) -> tensor<i64>
  // The largest index of a positive sample.
  %last = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%zi : tensor<i64>) {
  ^bb0(%v: f32, %acc: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %cand = arith.select %pos, %ii, %min : i64
    %m = arith.maxsi %acc, %cand : i64
    linalg.yield %m : i64
  } -> tensor<i64>
  %ef = tensor.empty() : tensor<f32>
  %cz = arith.constant 0.0 : f32
  %zf = linalg.fill ins(%cz : f32) outs(%ef : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%zf : tensor<f32>) dimensions = [0]
  %s = tensor.extract %sum[] : tensor<f32>
  %bf = arith.sitofp %bi : i64 to f32
  %mean = arith.divf %s, %bf : f32
  return %last, %mean : tensor<i64>, f32
}

// -----

// A token count (depends on data only) normalizes the per-token loss: it is
// computed in a first loop, the main loop uses the global count.
// CHECK-LABEL: func.func @token_mean(
// CHECK:         %[[COUNT:.*]] = scf.for
// CHECK:           tensor.extract_slice %{{.*}} : tensor<8x3xf32> to tensor<2x3xf32>
// CHECK:           %[[PC:.*]] = linalg.reduce
// CHECK:           ga.accumulate <add> %[[PC]]
// CHECK:         %[[C:.*]] = tensor.extract %[[COUNT]][] : tensor<f32>
// CHECK:         %[[LOSS:.*]] = scf.for
// CHECK:           linalg.generic
// CHECK:             arith.divf %{{.*}}, %[[C]] : f32
// CHECK:           ga.accumulate <add>
// CHECK:         return %[[LOSS]]
func.func @token_mean(%w: f32, %mask: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32> {
  %cz = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%cz : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %count = linalg.reduce { arith.addf } ins(%mask : tensor<8x3xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
  %c = tensor.extract %count[] : tensor<f32>
  %e2 = tensor.empty() : tensor<8x3xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b, t)>], iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<8x3xf32>) outs(%e2 : tensor<8x3xf32>) {
  ^bb0(%m: f32, %o: f32):
    %a = arith.mulf %m, %w : f32
    %d = arith.divf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<8x3xf32>
  %loss = linalg.reduce { arith.addf } ins(%scaled : tensor<8x3xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
  return %loss : tensor<f32>
}

// -----

// A [B, T, D] activation collapsed to [B*T, D] for a GEMM keeps 3 rows per
// sample; a bias broadcast to the batch is re-created at micro-batch size
// instead of being sliced from a full-batch tensor.
// CHECK-LABEL: func.func @collapse_and_broadcast(
// CHECK:         scf.for
// CHECK:           %[[XS:.*]] = tensor.extract_slice %{{.*}} [2, 3, 4] [1, 1, 1] : tensor<8x3x4xf32> to tensor<2x3x4xf32>
// CHECK:           %[[FLAT:.*]] = tensor.collapse_shape %[[XS]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:           %[[BE:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK:           %[[BB:.*]] = linalg.broadcast ins(%{{.*}} : tensor<4xf32>) outs(%[[BE]] : tensor<6x4xf32>)
// CHECK:           linalg.add ins(%[[FLAT]], %[[BB]] : tensor<6x4xf32>, tensor<6x4xf32>)
func.func @collapse_and_broadcast(%bias: tensor<4xf32>, %x: tensor<8x3x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<8x3x4xf32> into tensor<24x4xf32>
  %e = tensor.empty() : tensor<24x4xf32>
  %bb = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e : tensor<24x4xf32>) dimensions = [0]
  %h = linalg.add ins(%flat, %bb : tensor<24x4xf32>, tensor<24x4xf32>) outs(%e : tensor<24x4xf32>) -> tensor<24x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %s = linalg.reduce { arith.addf } ins(%h : tensor<24x4xf32>) outs(%e4 : tensor<4xf32>) dimensions = [0]
  return %s : tensor<4xf32>
}

// -----

// A weight used twice: its second gradient accumulates into the first
// (a chain). Each gets an accumulator; the chain is combined after the loop.
// A reduction that starts from a uniform, non-neutral value accumulates from
// that value.
// CHECK-LABEL: func.func @tied_weights(
// CHECK-SAME:      %{{.*}}: tensor<4x4xf32>, %[[BIAS:[a-z0-9]+]]: tensor<4xf32>,
// CHECK:         %[[LOOP:.*]]:3 = scf.for {{.*}} iter_args(%[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[A3:.*]] = %[[BIAS]])
// CHECK:           %[[P1:.*]] = linalg.matmul
// CHECK:           ga.accumulate <add> %[[P1]] into %[[A1]]
// CHECK:           %[[P2:.*]] = linalg.matmul
// CHECK:           ga.accumulate <add> %[[P2]] into %[[A2]]
// CHECK:           %[[P3:.*]] = linalg.reduce
// CHECK:           ga.accumulate <add> %[[P3]] into %[[A3]]
// CHECK:         %[[G:.*]] = ga.accumulate <add> %[[LOOP]]#1 into %[[LOOP]]#0
// CHECK:         return %[[G]], %[[LOOP]]#2
func.func @tied_weights(%w: tensor<4x4xf32>, %bias: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64},
                        %y: tensor<8x4xf32> {ga.batch = 0 : i64}) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %y : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%y, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%g1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<8x4xf32>) outs(%bias : tensor<4xf32>) dimensions = [0]
  return %g, %s : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// tensor.dim of a static non-batch dimension of a per-sample value is a
// constant; of the batch dimension, the batch size.
// CHECK-LABEL: func.func @dims(
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         %[[P:.*]] = arith.muli %[[C8]], %[[C3]] : index
// CHECK:         return %[[P]]
func.func @dims(%x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<8x3xf32>
  %f = tensor.dim %x, %c1 : tensor<8x3xf32>
  %n = arith.muli %b, %f : index
  return %n : index
}

// -----

// scf.for and scf.if with per-sample values are re-created in the loop body
// at micro-batch size; a uniform tensor yielded for a per-sample result is
// re-created at micro-batch size inside its branch.
// CHECK-LABEL: func.func @structured(
// CHECK:         scf.for
// CHECK:           %[[XS:.*]] = tensor.extract_slice {{.*}} : tensor<8x3xf32> to tensor<2x3xf32>
// CHECK:           %[[H:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[XS]]) -> (tensor<2x3xf32>)
// CHECK:             linalg.negf ins(%[[A]] : tensor<2x3xf32>)
// CHECK:           %[[D:.*]] = scf.if %{{.*}} -> (tensor<2x3xf32>)
// CHECK:             scf.yield %[[H]] : tensor<2x3xf32>
// CHECK:           } else {
// CHECK:             %[[Z:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK:             scf.yield %[[Z]] : tensor<2x3xf32>
// CHECK:           linalg.reduce {{.*}} ins(%[[D]] : tensor<2x3xf32>)
func.func @structured(%c: i1, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<8x3xf32>
  %h = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> tensor<8x3xf32> {
    %n = linalg.negf ins(%a : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
    scf.yield %n : tensor<8x3xf32>
  }
  %d = scf.if %c -> tensor<8x3xf32> {
    scf.yield %h : tensor<8x3xf32>
  } else {
    scf.yield %e : tensor<8x3xf32>
  }
  %e3 = tensor.empty() : tensor<3xf32>
  %s = linalg.reduce { arith.addf } ins(%d : tensor<8x3xf32>) outs(%e3 : tensor<3xf32>) dimensions = [0]
  return %s : tensor<3xf32>
}

// -----

// A dynamic batch: the batch size is read once at entry and normalizes the
// mean; the loop runs over run-time micro-batch sizes.
// CHECK-LABEL: func.func @dynamic_mean(
// CHECK-SAME:      %[[X:.*]]: tensor<?xf32> {ga.batch = 0 : i64})
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?xf32>
// CHECK:         %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:         %[[Q:.*]] = arith.divui %[[B]], %{{.*}} : index
// CHECK:         %[[LOOP:.*]] = scf.for
// CHECK:           tensor.extract_slice %[[X]][%{{.*}}] [%{{.*}}] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK:         return %[[LOOP]], %[[BI]]
func.func @dynamic_mean(%x: tensor<?xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, i64) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<?xf32>) outs(%e : tensor<f32>) dimensions = [0]
  %b = tensor.dim %x, %c0 : tensor<?xf32>
  %bi = arith.index_cast %b : index to i64
  return %s, %bi : tensor<f32>, i64
}
