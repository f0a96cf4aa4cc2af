// Deferral, end to end: a data-parallel step with one all-reduce per
// gradient (test/Integration/MPI/Inputs), rewritten by --ga-accumulate and
// bucketed, has exactly one collective per bucket per effective step, after
// the micro-batch loop(s), none inside, for any N (24 samples: N = 5 and 16
// leave a remainder, i.e. two loops, and the bucket buffer is carried from
// the first to the second).

// RUN: sed -e 's/@B@/24/g' -e 's/@IN@/16/g' -e 's/@HID@/32/g' %S/../Integration/MPI/Inputs/dp_mlp.mlir.in > %t.mlp.mlir
// RUN: ga-opt %t.mlp.mlir --ga-accumulate="micro-batches=1" --ga-bucket-gradients | FileCheck %s
// RUN: ga-opt %t.mlp.mlir --ga-accumulate="micro-batches=4" --ga-bucket-gradients | FileCheck %s
// RUN: ga-opt %t.mlp.mlir --ga-accumulate="micro-batches=5" --ga-bucket-gradients | FileCheck %s
// RUN: ga-opt %t.mlp.mlir --ga-accumulate="micro-batches=16" --ga-bucket-gradients | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK-NOT:     all_reduce
// CHECK:         scf.yield
// CHECK-NOT:     all_reduce
// CHECK:         ga.all_reduce <mean> %{{.*}}#1 bucket 0 : tensor<874xf32>
// CHECK-NOT:     scf.for
// CHECK:         ga.all_reduce <mean> %{{.*}} bucket 1 : tensor<f32>
// CHECK-NOT:     all_reduce
// CHECK:         return

// 2 KiB buckets: dw2 + db2 (1320 bytes), dw1 (2048), db1 (128), in the order
// the backward produces them; the loss last.
// RUN: ga-opt %t.mlp.mlir --ga-accumulate="micro-batches=4" \
// RUN:   --ga-bucket-gradients="bucket-size=2048" | FileCheck %s --check-prefix=SMALL
// SMALL-LABEL: func.func @train_step
// SMALL-NOT:     all_reduce
// SMALL:         %[[L:.*]]:4 = scf.for
// SMALL-NOT:     all_reduce
// SMALL:         ga.all_reduce <mean> %[[L]]#3 bucket 0 : tensor<330xf32>
// SMALL-NEXT:    tensor.extract_slice
// SMALL-NEXT:    tensor.expand_shape {{.*}} into tensor<32x10xf32>
// SMALL-NEXT:    tensor.extract_slice {{.*}} to tensor<10xf32>
// SMALL-NEXT:    ga.all_reduce <mean> %[[L]]#1 bucket 1 : tensor<16x32xf32>
// SMALL-NEXT:    ga.all_reduce <mean> %[[L]]#2 bucket 2 : tensor<32xf32>
// SMALL:         ga.all_reduce <mean> %{{.*}} bucket 3 : tensor<f32>
// SMALL-NOT:     all_reduce

// The upstream form: shard.all_reduce (average) on a shard.grid.
// RUN: sed -e 's/ga.all_reduce <mean> \(%[a-z0-9]*\) : \(tensor<[0-9x]*f32>\)/shard.all_reduce \1 on @dp grid_axes = [0] reduction = average : \2 -> \2/' \
// RUN:     -e 's/^func.func @train_step/shard.grid @dp(shape = ?)\nfunc.func @train_step/' %t.mlp.mlir > %t.shard.mlir
// RUN: ga-opt %t.shard.mlir --ga-accumulate="micro-batches=4" --ga-bucket-gradients | FileCheck %s --check-prefix=SHARD
// RUN: ga-opt %t.shard.mlir --ga-accumulate="micro-batches=16" --ga-bucket-gradients | FileCheck %s --check-prefix=SHARD
// SHARD:         shard.grid @dp(shape = ?)
// SHARD-LABEL:   func.func @train_step
// SHARD-NOT:     = shard.all_reduce
// SHARD:         scf.yield
// SHARD-NOT:     = shard.all_reduce
// SHARD:         shard.all_reduce %{{.*}}#1 on @dp grid_axes = [0] reduction = average {ga.bucket = 0 : i64} : tensor<874xf32> -> tensor<874xf32>
// SHARD-NOT:     scf.for
// SHARD:         shard.all_reduce %{{.*}} on @dp grid_axes = [0] reduction = average {ga.bucket = 1 : i64} : tensor<f32> -> tensor<f32>
// SHARD-NOT:     = shard.all_reduce

// The token count of a masked loss is a data-only statistic, all-reduced so
// that the normalization is the global token mean: --ga-accumulate computes
// it in a statistics loop, and its all-reduce runs once, between that loop
// and the main loop; the gradients (one bucket) and the loss follow the main
// loop.
// RUN: sed -e 's/@BT@/192/g' -e 's/@B@/24/g' %S/../Integration/MPI/Inputs/dp_tokens.mlir.in > %t.tok.mlir
// RUN: ga-opt %t.tok.mlir --ga-accumulate="micro-batches=4" --ga-bucket-gradients | FileCheck %s --check-prefix=TOK
// RUN: ga-opt %t.tok.mlir --ga-accumulate="micro-batches=5" --ga-bucket-gradients | FileCheck %s --check-prefix=TOK
// TOK-LABEL: func.func @train_step
// TOK-NOT:     all_reduce
// TOK:         scf.yield
// TOK-NOT:     all_reduce
// TOK:         ga.all_reduce <sum> %{{.*}} bucket 0 : tensor<f32>
// TOK-NOT:     all_reduce
// TOK:         scf.for
// TOK-NOT:     all_reduce
// TOK:         ga.all_reduce <sum> %{{.*}}#1 bucket 1 : tensor<660xf32>
// TOK-NOT:     scf.for
// TOK:         ga.all_reduce <sum> %{{.*}} bucket 2 : tensor<f32>
// TOK-NOT:     all_reduce
