// RUN: ga-opt %s -ga-cleanup | FileCheck %s

// Dead full-batch values go; loop invariants that are not destination-style
// leave the loop; a linalg.fill stays inside, where it bufferizes in place.
// CHECK-LABEL: func.func @cleanup(
// CHECK-NOT:     tensor<256x10xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<64x10xf32>
// CHECK:         scf.for
// CHECK-NEXT:      %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<64x10xf32>)
// CHECK-NEXT:      linalg.reduce {{.*}} ins(%[[F]]
func.func @cleanup(%x: tensor<10xf32>) -> tensor<10xf32> {
  %full = tensor.empty() : tensor<256x10xf32>
  %c0f = arith.constant 0.0 : f32
  %dead = linalg.fill ins(%c0f : f32) outs(%full : tensor<256x10xf32>) -> tensor<256x10xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %x) -> tensor<10xf32> {
    %c4 = arith.constant 4 : index
    %e = tensor.empty() : tensor<64x10xf32>
    %f = linalg.fill ins(%c0f : f32) outs(%e : tensor<64x10xf32>) -> tensor<64x10xf32>
    %s = linalg.reduce { arith.addf } ins(%f : tensor<64x10xf32>) outs(%acc : tensor<10xf32>) dimensions = [0]
    scf.yield %s : tensor<10xf32>
  }
  return %r : tensor<10xf32>
}
