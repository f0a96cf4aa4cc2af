// RUN: ga-opt %s -split-input-file -ga-micro-batch="micro-batches=2" | FileCheck %s

// `ga.data_parallel`: the batch is the concatenation of the ranks' shards.
// The step gets two index arguments (this rank's first and one-past-last
// sample), its loop runs N micro-batches of run-time sizes over them only,
// and every reduction over the batch is all-reduced after its loop; the
// optimizer reads the all-reduced gradient.

// CHECK-LABEL: func.func @sgd(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<8x4xf32> {ga.batch = 0 : i64}, %[[DY:[a-z0-9]+]]: tensor<8x2xf32> {ga.batch = 0 : i64}, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index)
// CHECK-NOT:     ga.data_parallel
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[LOCAL:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// CHECK:         cf.assert %{{.*}}, "ga: this rank's shard [begin, end) of the batch must lie within the batch
// CHECK:         %[[Q:.*]] = arith.divui %[[LOCAL]], %[[C2]] : index
// CHECK:         %[[R:.*]] = arith.remui %[[LOCAL]], %[[C2]] : index
// CHECK:         %[[LOOP:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[C2]]
// CHECK:           %[[BASE:.*]] = arith.muli %[[I]], %[[Q]] : index
// CHECK:           %[[SHIFT:.*]] = arith.minui %[[I]], %[[R]] : index
// CHECK:           %[[OFF:.*]] = arith.addi %[[BASE]], %[[SHIFT]] : index
// CHECK:           %[[GOFF:.*]] = arith.addi %[[OFF]], %[[BEGIN]] : index
// CHECK:           tensor.extract_slice %[[X]][%[[GOFF]], 0] [%{{.*}}, 4] [1, 1] : tensor<8x4xf32> to tensor<?x4xf32>
// CHECK:           ga.accumulate <add>
// CHECK:         %[[SUM:.*]] = ga.all_reduce <sum> %[[LOOP]] : tensor<4x2xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<4x2xf32>)
func.func @sgd(%w: tensor<4x2xf32>, %lr: f32, %x: tensor<8x4xf32> {ga.batch = 0 : i64},
               %dy: tensor<8x2xf32> {ga.batch = 0 : i64}) -> tensor<4x2xf32>
    attributes {ga.data_parallel} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<8x4xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%dw : tensor<4x2xf32>) outs(%w : tensor<4x2xf32>) {
  ^bb0(%g: f32, %p: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<4x2xf32>
  return %w2 : tensor<4x2xf32>
}

// -----

// The mean's normalizer is the GLOBAL batch size (the full extent of the
// argument: 8), linalg.index along the batch is the global sample index
// (micro-batch offset + this rank's begin), a max over the batch is
// all-reduced with max.
// CHECK-LABEL: func.func @mean_and_index(
// CHECK-SAME:      %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index)
// CHECK-DAG:     %[[B:.*]] = arith.constant 8 : index
// CHECK:         %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:         %[[BF:.*]] = arith.sitofp %[[BI]] : i64 to f32
// CHECK:         %[[LOOP:.*]]:2 = scf.for
// CHECK:           %[[OFF:.*]] = arith.addi %{{.*}}, %[[BEGIN]] : index
// CHECK:           linalg.generic
// CHECK:             %[[LOCAL:.*]] = linalg.index 0 : index
// CHECK:             arith.addi %[[LOCAL]], %[[OFF]] : index
// CHECK:           ga.accumulate <maxsi>
// CHECK:           ga.accumulate <add>
// CHECK:         %[[LAST:.*]] = ga.all_reduce <max> %[[LOOP]]#0 : tensor<i64>
// CHECK:         %[[TOTAL:.*]] = ga.all_reduce <sum> %[[LOOP]]#1 : tensor<f32>
// CHECK:         %[[SUM:.*]] = tensor.extract %[[TOTAL]][] : tensor<f32>
// CHECK:         arith.divf %[[SUM]], %[[BF]] : f32
// CHECK:         return %[[LAST]]
func.func @mean_and_index(%x: tensor<8xf32> {ga.batch = 0 : i64}) -> (tensor<i64>, f32)
    attributes {ga.data_parallel} {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<8xf32>
  %bi = arith.index_cast %b : index to i64
  %ei = tensor.empty() : tensor<i64>
  %min = arith.constant -9223372036854775808 : i64
  %zi = linalg.fill ins(%min : i64) outs(%ei : tensor<i64>) -> tensor<i64>
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

// A token count normalizes the per-token loss: it is all-reduced between the
// statistics loop and the main loop, so every rank divides by the GLOBAL
// count; the loss is all-reduced after the main loop.
// CHECK-LABEL: func.func @token_mean(
// CHECK:         %[[COUNT:.*]] = scf.for
// CHECK:           ga.accumulate <add>
// CHECK:         %[[GCOUNT:.*]] = ga.all_reduce <sum> %[[COUNT]] : tensor<f32>
// CHECK:         %[[C:.*]] = tensor.extract %[[GCOUNT]][] : tensor<f32>
// CHECK:         %[[LOSS:.*]] = scf.for
// CHECK:           arith.divf %{{.*}}, %[[C]] : f32
// CHECK:           ga.accumulate <add>
// CHECK:         %[[GLOSS:.*]] = ga.all_reduce <sum> %[[LOSS]] : tensor<f32>
// CHECK:         return %[[GLOSS]]
func.func @token_mean(%w: f32, %mask: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<f32>
    attributes {ga.data_parallel} {
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
