// RUN: ga-opt %s --ga-bucket-gradients --split-input-file | FileCheck %s
// RUN: ga-opt %s --ga-bucket-gradients="bucket-size=40" --split-input-file \
// RUN:   | FileCheck %s --check-prefix=SMALL

// Two accumulators of one loop share a flat buffer: each is updated in a
// view of it (extract_slice + expand_shape before its producer, collapse +
// insert_slice after), chained in the order the body produces them (db
// first, then dw), and one all-reduce runs on the whole bucket. The loss is
// reduced after a scaling op, so it is a bucket of its own, launched after.

// CHECK-LABEL: func.func @step
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<15xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<15xf32>)
// CHECK:         %[[L:.*]]:2 = scf.for {{.*}} iter_args(%[[LS:.*]] = %{{.*}}, %[[F:.*]] = %[[Z]]) -> (tensor<f32>, tensor<15xf32>)
// CHECK-NOT:       ga.all_reduce
// CHECK:           %[[VB:.*]] = tensor.extract_slice %[[F]][0] [3] [1] : tensor<15xf32> to tensor<3xf32>
// CHECK:           %[[GB:.*]] = linalg.reduce {{.*}} outs(%[[VB]] : tensor<3xf32>)
// CHECK:           %[[F1:.*]] = tensor.insert_slice %[[GB]] into %[[F]][0] [3] [1]
// CHECK:           %[[SW:.*]] = tensor.extract_slice %[[F1]][3] [12] [1] : tensor<15xf32> to tensor<12xf32>
// CHECK:           %[[VW:.*]] = tensor.expand_shape %[[SW]] {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK:           %[[GW:.*]] = linalg.matmul {{.*}} outs(%[[VW]] : tensor<4x3xf32>)
// CHECK:           %[[CW:.*]] = tensor.collapse_shape %[[GW]] {{\[\[}}0, 1]] : tensor<4x3xf32> into tensor<12xf32>
// CHECK:           %[[F2:.*]] = tensor.insert_slice %[[CW]] into %[[F1]][3] [12] [1]
// CHECK:           scf.yield %{{.*}}, %[[F2]] : tensor<f32>, tensor<15xf32>
// CHECK:         %[[R:.*]] = ga.all_reduce <mean> %[[L]]#1 bucket 0 : tensor<15xf32>
// CHECK:         %[[DB:.*]] = tensor.extract_slice %[[R]][0] [3] [1]
// CHECK:         %[[RW:.*]] = tensor.extract_slice %[[R]][3] [12] [1]
// CHECK:         %[[DW:.*]] = tensor.expand_shape %[[RW]] {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK:         %[[LOSS:.*]] = linalg.generic
// CHECK:         %[[LR:.*]] = ga.all_reduce <mean> %[[LOSS]] bucket 1 : tensor<f32>
// CHECK-NOT:     ga.all_reduce
// CHECK:         return %[[DW]], %[[DB]], %[[LR]]

// With 40-byte buckets the 48-byte dw is a bucket of its own and nothing is
// shared; the collectives are launched in production order: db, dw, loss.
// SMALL-LABEL: func.func @step
// SMALL:         %[[L:.*]]:3 = scf.for
// SMALL:         ga.all_reduce <mean> %[[L]]#1 bucket 0 : tensor<3xf32>
// SMALL:         ga.all_reduce <mean> %[[L]]#0 bucket 1 : tensor<4x3xf32>
// SMALL:         ga.all_reduce <mean> %{{.*}} bucket 2 : tensor<f32>
#lhs_t = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @step(%x: tensor<8x4xf32>, %dy: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e_w = tensor.empty() : tensor<4x3xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e_b = tensor.empty() : tensor<3xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<3xf32>) -> tensor<3xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %acc:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%gw = %z_w, %gb = %z_b, %ls = %z_s)
      -> (tensor<4x3xf32>, tensor<3xf32>, tensor<f32>) {
    %off = arith.muli %i, %c1 : index
    %xs = tensor.extract_slice %x[%off, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %ds = tensor.extract_slice %dy[%off, 0] [2, 3] [1, 1] : tensor<8x3xf32> to tensor<2x3xf32>
    %ls2 = linalg.reduce { arith.addf } ins(%ds : tensor<2x3xf32>) outs(%ls : tensor<f32>) dimensions = [0, 1]
    %gb2 = linalg.reduce { arith.addf } ins(%ds : tensor<2x3xf32>) outs(%gb : tensor<3xf32>) dimensions = [0]
    %gw2 = linalg.matmul indexing_maps = [#lhs_t, #rhs, #out]
        ins(%xs, %ds : tensor<2x4xf32>, tensor<2x3xf32>) outs(%gw : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %gw2, %gb2, %ls2 : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>
  }
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%acc#2 : tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %lr = ga.all_reduce <mean> %loss : tensor<f32>
  %dw = ga.all_reduce <mean> %acc#0 : tensor<4x3xf32>
  %db = ga.all_reduce <mean> %acc#1 : tensor<3xf32>
  return %dw, %db, %lr : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>
}

// -----

// The upstream input form: shard.all_reduce over the data-parallel grid. The
// bucket stays a shard.all_reduce (its id in `ga.bucket`). An accumulator
// that does not start from a fill (%init) is packed into the flat buffer
// once, before the loop.

// CHECK-LABEL: func.func @shard_step
// CHECK-SAME:      (%{{.*}}: tensor<8x4xf32>, %[[INIT:.*]]: tensor<3xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<19xf32>
// CHECK:         %[[P0:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0] [16] [1]
// CHECK:         %[[P1:.*]] = tensor.insert_slice %[[INIT]] into %[[P0]][16] [3] [1]
// CHECK:         %[[L:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[P1]]) -> (tensor<19xf32>)
// CHECK-NOT:       shard.all_reduce
// CHECK:         %[[R:.*]] = shard.all_reduce %[[L]] on @dp grid_axes = [0] reduction = average {ga.bucket = 0 : i64} : tensor<19xf32> -> tensor<19xf32>
// CHECK-NOT:     shard.all_reduce
// SMALL-LABEL: func.func @shard_step
// SMALL:         shard.all_reduce {{.*}} {ga.bucket = 0 : i64} : tensor<4x4xf32>
// SMALL:         shard.all_reduce {{.*}} {ga.bucket = 1 : i64} : tensor<3xf32>
shard.grid @dp(shape = ?)
func.func @shard_step(%x: tensor<8x4xf32>, %init: tensor<3xf32>) -> (tensor<4x4xf32>, tensor<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e_w = tensor.empty() : tensor<4x4xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<4x4xf32>) -> tensor<4x4xf32>
  %acc:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%gw = %z_w, %gb = %init) -> (tensor<4x4xf32>, tensor<3xf32>) {
    %xs = tensor.extract_slice %x[%i, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %gw2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%xs, %xs : tensor<2x4xf32>, tensor<2x4xf32>) outs(%gw : tensor<4x4xf32>) -> tensor<4x4xf32>
    %xs3 = tensor.extract_slice %xs[0, 0] [2, 3] [1, 1] : tensor<2x4xf32> to tensor<2x3xf32>
    %gb2 = linalg.reduce { arith.addf } ins(%xs3 : tensor<2x3xf32>) outs(%gb : tensor<3xf32>) dimensions = [0]
    scf.yield %gw2, %gb2 : tensor<4x4xf32>, tensor<3xf32>
  }
  %dw = shard.all_reduce %acc#0 on @dp grid_axes = [0] reduction = average : tensor<4x4xf32> -> tensor<4x4xf32>
  %db = shard.all_reduce %acc#1 on @dp grid_axes = [0] reduction = average : tensor<3xf32> -> tensor<3xf32>
  return %dw, %db : tensor<4x4xf32>, tensor<3xf32>
}

// -----

// Accumulators whose live ranges in the body overlap (%gb is read before %gw
// is produced and updated after it) cannot be chained through one flat
// value: they stay separate. Collectives of different kinds or element types
// never share a bucket. An accumulator used after the loop besides its
// all-reduce is not shared either.

// CHECK-LABEL: func.func @unshareable
// CHECK:         %[[L:.*]]:4 = scf.for
// CHECK-DAG:     ga.all_reduce <sum> %[[L]]#0 bucket {{[0-9]}} : tensor<4xf32>
// CHECK-DAG:     ga.all_reduce <sum> %[[L]]#1 bucket {{[0-9]}} : tensor<4xf32>
// CHECK-DAG:     ga.all_reduce <max> %[[L]]#2 bucket {{[0-9]}} : tensor<4xf32>
// CHECK-DAG:     ga.all_reduce <sum> %[[L]]#3 bucket {{[0-9]}} : tensor<4xf32>
func.func @unshareable(%x: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %acc:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%gb = %z, %gw = %z, %gm = %z, %gu = %z)
      -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %xs = tensor.extract_slice %x[%i, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %t = linalg.add ins(%gb, %gb : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %gw2 = linalg.reduce { arith.addf } ins(%xs : tensor<2x4xf32>) outs(%gw : tensor<4xf32>) dimensions = [0]
    %gb2 = linalg.reduce { arith.addf } ins(%xs : tensor<2x4xf32>) outs(%t : tensor<4xf32>) dimensions = [0]
    %gm2 = linalg.reduce { arith.maximumf } ins(%xs : tensor<2x4xf32>) outs(%gm : tensor<4xf32>) dimensions = [0]
    %gu2 = linalg.reduce { arith.addf } ins(%xs : tensor<2x4xf32>) outs(%gu : tensor<4xf32>) dimensions = [0]
    scf.yield %gb2, %gw2, %gm2, %gu2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  %rb = ga.all_reduce <sum> %acc#0 : tensor<4xf32>
  %rw = ga.all_reduce <sum> %acc#1 : tensor<4xf32>
  %rm = ga.all_reduce <max> %acc#2 : tensor<4xf32>
  %ru = ga.all_reduce <sum> %acc#3 : tensor<4xf32>
  return %rb, %rw, %rm, %ru, %acc#3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
