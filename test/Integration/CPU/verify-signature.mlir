// ga-verify feeds every argument kind it supports and compares every result
// kind: scalars (f32, i64, index), 0-d tensors, f64 tensors, i1 masks, integer
// labels with the automatic range, integer results (exact), dynamic batch.
//
// RUN: ga-verify %s --micro-batches=3 --batch-size=10 --dump-inputs 2>&1 | FileCheck %s
// RUN: ga-verify %s --micro-batches=4 --json | FileCheck %s --check-prefix=JSON
// RUN: ga-verify %s --micro-batches=2 --pipeline='ga-accumulate{micro-batches=2 dynamic-micro-batches=true}' | FileCheck %s --check-prefix=DYN

// CHECK: input #0: tensor<4xf64> init=normal shape=[4]
// CHECK: input #1: i64 init=uniform range=[1, 5) shape=[]
// CHECK: input #2: index init=uniform range=[1, 10) shape=[]
// CHECK: input #3: tensor<f32> init=positive shape=[]
// CHECK: input #4: tensor<?x4xf64> init=normal shape=[10,4]
// CHECK: input #5: tensor<?xi1> init=mask shape=[10] min=0 max=1
// CHECK: input #6: tensor<?xi32> init=uniform range=[0, 4) shape=[10]
// CHECK: ga-verify: @train_step with builtin.module(ga-accumulate{micro-batches=3}), batch 10, seeds 0, 1, 2
// CHECK: #0 tensor<4xf64> {{.*}} PASS
// CHECK: #1 i64 0.000e+00 0.000e+00 exact {{.*}} PASS
// CHECK: #2 tensor<i32> 0.000e+00 0.000e+00 exact {{.*}} PASS
// CHECK: #3 tensor<i32> {{.*}} exact {{.*}} PASS
// CHECK: #4 f32 {{.*}} PASS
// CHECK: PASS: 5/5 results match

// JSON: "batch": 19,
// JSON: "pass": true,
// JSON: "type": "tensor<i32>",
// JSON: "mismatches": 0,

// DYN: PASS: 5/5 results match

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#id1 = affine_map<(i) -> (i)>
#red = affine_map<(i) -> ()>
func.func @train_step(%w: tensor<4xf64>, %t: i64 {ga.range = [1, 5]}, %k: index,
                      %scale: tensor<f32> {ga.init = "positive"},
                      %x: tensor<?x4xf64> {ga.batch = 0 : i64},
                      %mask: tensor<?xi1> {ga.batch = 0 : i64},
                      %y: tensor<?xi32> {ga.batch = 0 : i64})
    -> (tensor<4xf64>, i64, tensor<i32>, tensor<i32>, f32) {
  %c0 = arith.constant 0 : index
  %zf = arith.constant 0.0 : f64
  %zi = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %lr = arith.constant 0.1 : f64
  // g = sum_i mask_i * y_i * x_i
  %e4 = tensor.empty() : tensor<4xf64>
  %z4 = linalg.fill ins(%zf : f64) outs(%e4 : tensor<4xf64>) -> tensor<4xf64>
  %g = linalg.generic {indexing_maps = [#id2, #row, #row, #col],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x, %mask, %y : tensor<?x4xf64>, tensor<?xi1>, tensor<?xi32>) outs(%z4 : tensor<4xf64>) {
  ^bb0(%a: f64, %m: i1, %l: i32, %acc: f64):
    %lf = arith.sitofp %l : i32 to f64
    %p = arith.mulf %a, %lf : f64
    %q = arith.select %m, %p, %zf : f64
    %s = arith.addf %acc, %q : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  // w - lr * t * g
  %tf = arith.sitofp %t : i64 to f64
  %w_new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<4xf64>, tensor<4xf64>) outs(%e4 : tensor<4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %u = arith.mulf %lr, %tf : f64
    %v = arith.mulf %u, %b : f64
    %n = arith.subf %a, %v : f64
    linalg.yield %n : f64
  } -> tensor<4xf64>
  // integer metrics: number of valid samples, sum of their labels
  %e0 = tensor.empty() : tensor<i32>
  %z0 = linalg.fill ins(%zi : i32) outs(%e0 : tensor<i32>) -> tensor<i32>
  %count = linalg.generic {indexing_maps = [#id1, #red], iterator_types = ["reduction"]}
      ins(%mask : tensor<?xi1>) outs(%z0 : tensor<i32>) {
  ^bb0(%m: i1, %acc: i32):
    %c = arith.select %m, %one, %zi : i32
    %s = arith.addi %acc, %c : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  %labels = linalg.generic {indexing_maps = [#id1, #id1, #red], iterator_types = ["reduction"]}
      ins(%mask, %y : tensor<?xi1>, tensor<?xi32>) outs(%z0 : tensor<i32>) {
  ^bb0(%m: i1, %l: i32, %acc: i32):
    %c = arith.select %m, %l, %zi : i32
    %s = arith.addi %acc, %c : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  // uniform scalars
  %ki = arith.index_cast %k : index to i64
  %tk = arith.addi %t, %ki : i64
  %sc = tensor.extract %scale[] : tensor<f32>
  %kf = arith.sitofp %ki : i64 to f32
  %out = arith.mulf %sc, %kf : f32
  return %w_new, %tk, %count, %labels, %out : tensor<4xf64>, i64, tensor<i32>, tensor<i32>, f32
}
