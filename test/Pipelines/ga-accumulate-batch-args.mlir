// RUN: ga-opt %s -ga-accumulate="micro-batches=2 batch-args=1,2:1" | FileCheck %s
// RUN: not ga-opt %s -ga-accumulate="micro-batches=2" 2>&1 | FileCheck %s --check-prefix=NONE

// Input exported without ga.batch: the per-sample arguments are named on the
// command line (y has its batch in dimension 1).
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      {ga.batch = 0 : i64}
// CHECK-SAME:      {ga.batch = 1 : i64}
// CHECK:         scf.for
// CHECK:           tensor.extract_slice %{{.*}} [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
// CHECK:           tensor.extract_slice %{{.*}} [3, 2] [1, 1] : tensor<3x4xf32> to tensor<3x2xf32>

// Without them nothing is selected: an error that says how to mark them.
// NONE: error: no function has a per-sample argument: mark them with `{ga.batch = <dim>}` or name them with the option batch-args=<index>[:<dim>],...
// NONE-NOT: scf.for

func.func @step(%w: tensor<3xf32>, %x: tensor<4x3xf32>, %y: tensor<3x4xf32>) -> tensor<3xf32> {
  %e = tensor.empty() : tensor<3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, f) -> (b, f)>, affine_map<(b, f) -> (f, b)>, affine_map<(b, f) -> (f)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x, %y : tensor<4x3xf32>, tensor<3x4xf32>) outs(%w : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}
