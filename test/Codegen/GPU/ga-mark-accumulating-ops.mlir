// RUN: ga-opt %s -ga-mark-accumulating-ops -split-input-file | FileCheck %s

// The ops that update an accumulator of a micro-batch loop (a tensor carried
// by scf.for, written through the op's init) are marked; the op that only
// reads the accumulator is not.

// CHECK-LABEL: func.func @accumulators
func.func @accumulators(%x: tensor<4x8x16xf32>, %w: tensor<16x16xf32>)
    -> (tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%w : tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: scf.for
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z, %gw = %zw)
      -> (tensor<16xf32>, tensor<16x16xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 16] [1, 1, 1]
        : tensor<4x8x16xf32> to tensor<8x16xf32>
    // CHECK: linalg.reduce
    // CHECK: {ga.accumulates}
    %s = linalg.reduce { arith.addf } ins(%xi : tensor<8x16xf32>)
           outs(%acc : tensor<16xf32>) dimensions = [0]
    // CHECK: linalg.matmul
    // CHECK-SAME: {ga.accumulates}
    %m = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                        affine_map<(m, n, k) -> (k, n)>,
                                        affine_map<(m, n, k) -> (m, n)>]
           ins(%xi, %xi : tensor<8x16xf32>, tensor<8x16xf32>)
           outs(%gw : tensor<16x16xf32>) -> tensor<16x16xf32>
    scf.yield %s, %m : tensor<16xf32>, tensor<16x16xf32>
  }
  // The sum of the accumulator read after the loop is no accumulation.
  // CHECK: linalg.add
  // CHECK-NOT: ga.accumulates
  // CHECK: return
  %d = linalg.add ins(%r#0, %r#0 : tensor<16xf32>, tensor<16xf32>)
         outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r#0, %r#1, %d : tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>
}

// -----

// Nested loops: the inner loop's accumulator is marked where it is updated.

// CHECK-LABEL: func.func @nested
// CHECK: linalg.generic
// CHECK-SAME: ga.accumulates
func.func @nested(%x: tensor<16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %init) -> (tensor<16xf32>) {
    %r2 = scf.for %j = %c0 to %c2 step %c1 iter_args(%b = %a) -> (tensor<16xf32>) {
      %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<16xf32>) outs(%b : tensor<16xf32>) {
      ^bb0(%in: f32, %out: f32):
        %s = arith.addf %in, %out : f32
        linalg.yield %s : f32
      } -> tensor<16xf32>
      scf.yield %g : tensor<16xf32>
    }
    scf.yield %r2 : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
