// RUN: ga-opt %s -ga-fuse-elementwise="fuse-kept=1" -split-input-file | FileCheck %s
// RUN: ga-opt %s -ga-fuse-elementwise -split-input-file | FileCheck %s --check-prefix=OFF

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// A bias add read by tanh (the forward) and again after the product that
// reads tanh (the backward reading the kept pre-activation): the add is
// computed in tanh's loop, which yields it as a second result, once; the
// backward reads that result.
// CHECK-LABEL: func.func @kept_for_backward
// CHECK:         %[[F:.*]]:2 = linalg.generic
// CHECK-SAME:        ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:           %[[H:.*]] = arith.addf
// CHECK:           %[[T:.*]] = math.tanh %[[H]]
// CHECK:           linalg.yield %[[H]], %[[T]]
// CHECK:         %[[P:.*]] = linalg.matmul ins(%[[F]]#1,
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[P]], %[[F]]#0 :
// CHECK-NOT:       math.tanh
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.generic
// Without fuse-kept, upstream's single-use rule keeps the add a loop of its
// own.
// OFF-LABEL: func.func @kept_for_backward
// OFF-COUNT-3: linalg.generic
func.func @kept_for_backward(%z: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>)
    -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = math.tanh %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %p = linalg.matmul ins(%t, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// A chain of kept values (GELU's pieces: each read again by the backward):
// one loop computes and yields all three.
// CHECK-LABEL: func.func @kept_chain
// CHECK:         %[[F:.*]]:3 = linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK:           math.tanh
// CHECK:           linalg.yield
// CHECK:         linalg.matmul ins(%[[F]]#2,
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%{{.*}}, %[[F]]#0, %[[F]]#1 :
// CHECK-NOT:       math.tanh
// CHECK-NOT:     linalg.generic
// OFF-LABEL: func.func @kept_chain
// OFF-COUNT-4: linalg.generic
func.func @kept_chain(%z: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>)
    -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = math.tanh %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %p = linalg.matmul ins(%t, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %h, %sq : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %v: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    %u = arith.addf %s, %v : f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// Another user between the producer and its consumer (the product reads
// %h before tanh does): the fused op would stand after it, so nothing is
// fused.
// CHECK-LABEL: func.func @user_between
// CHECK:         %[[H:.*]] = linalg.generic
// CHECK:         linalg.matmul ins(%[[H]],
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[H]] :
// CHECK-NOT:       arith.addf
// CHECK:           math.tanh
func.func @user_between(%z: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %p = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = math.tanh %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %p, %t : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>

// The consumer reduces (a row sum): a preserved result in its loops would be
// written once per reduced iteration, so the kept value stays a loop of its
// own. So does one whose consumer is in a loop: fusing would compute it in
// every trip.
// CHECK-LABEL: func.func @reduction_or_loop_consumer
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @reduction_or_loop_consumer(%z: tensor<4x8xf32>, %b: tensor<8xf32>, %acc: tensor<4xf32>, %n: index)
    -> (tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%it = %z) -> tensor<4x8xf32> {
    %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h, %it : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      linalg.yield %m : f32
    } -> tensor<4x8xf32>
    scf.yield %t : tensor<4x8xf32>
  }
  return %r, %l, %h : tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
