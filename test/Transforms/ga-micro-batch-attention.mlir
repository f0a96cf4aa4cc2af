// RUN: ga-opt %s -split-input-file -ga-micro-batch="micro-batches=4" | FileCheck %s

// ga.attention and its backward in a micro-batch: a tile of the batch loop
// the maps give (BatchAttention.cpp). Per-sample operands are the
// micro-batch's copies, a uniform operand the batch loop indexes (a padding
// mask computed before the step) is sliced, one it does not index (a causal
// bias over positions) is read whole, and the results keep the batch loop
// where their maps have it: the key gradient reduced over the batch after
// the backward is accumulated.

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#l = affine_map<(b, h, m, k1, k2, n) -> (b, h, m)>
#pad = affine_map<(b, h, m, k1, k2, n) -> (b, 0, 0, k2)>
#bias = affine_map<(b, h, m, k1, k2, n) -> (0, 0, m, k2)>

// CHECK-LABEL: func.func @self_attention(
// CHECK-SAME:      %[[X:.*]]: tensor<8x2x4x6xf32> {ga.batch = 0 : i64}, %[[DO:.*]]: tensor<8x2x4x6xf32> {ga.batch = 0 : i64}, %[[PAD:.*]]: tensor<8x1x1x4xf32>, %[[BIAS:.*]]: tensor<1x1x4x4xf32>)
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[OUT:.*]] = %{{.*}})
// CHECK:           %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-DAG:       %[[XS:.*]] = tensor.extract_slice %[[X]][%[[OFF]], 0, 0, 0] [2, 2, 4, 6] [1, 1, 1, 1]
// CHECK-DAG:       %[[PADS:.*]] = tensor.extract_slice %[[PAD]][%[[OFF]], 0, 0, 0] [2, 1, 1, 4] [1, 1, 1, 1]
// CHECK:           %[[O:.*]], %[[L:.*]] = ga.attention %[[XS]], %[[XS]], %[[XS]] mask(%[[PADS]] : tensor<2x1x1x4xf32>) scale 5.000000e-01 causal indexing_maps
// CHECK-SAME:        -> tensor<2x2x4x6xf32>, tensor<2x2x4xf32>
// CHECK:           %[[DOS:.*]] = tensor.extract_slice %[[DO]][%[[OFF]], 0, 0, 0] [2, 2, 4, 6] [1, 1, 1, 1]
// CHECK:           %{{.*}}, %[[DK:.*]], %{{.*}} = ga.attention_backward %[[XS]], %[[XS]], %[[XS]], %[[O]], %[[DOS]], %[[L]] mask(%[[BIAS]] : tensor<1x1x4x4xf32>)
// CHECK-SAME:        -> tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>
// CHECK:           %[[R:.*]] = linalg.reduce { arith.addf } ins(%[[DK]] : tensor<2x2x4x6xf32>)
// CHECK:           ga.accumulate <add> %[[R]] into %[[ACC]]
// CHECK:           tensor.insert_slice %[[O]] into %[[OUT]][%[[OFF]], 0, 0, 0] [2, 2, 4, 6]
// CHECK:         return %[[LOOP]]#0, %[[LOOP]]#1
func.func @self_attention(%x: tensor<8x2x4x6xf32> {ga.batch = 0 : i64}, %do: tensor<8x2x4x6xf32> {ga.batch = 0 : i64},
                          %pad: tensor<8x1x1x4xf32>, %bias: tensor<1x1x4x4xf32>) -> (tensor<2x4x6xf32>, tensor<8x2x4x6xf32>) {
  %o, %lse = ga.attention %x, %x, %x mask(%pad : tensor<8x1x1x4xf32>) scale 0.5 causal indexing_maps [#q, #k, #v, #pad, #o, #l]
      : tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32> -> tensor<8x2x4x6xf32>, tensor<8x2x4xf32>
  %dq, %dk, %dv = ga.attention_backward %x, %x, %x, %o, %do, %lse mask(%bias : tensor<1x1x4x4xf32>) scale 0.5 causal indexing_maps [#q, #k, #v, #bias, #o, #l]
      : tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>, tensor<8x2x4xf32>
      -> tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>, tensor<8x2x4x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %g = linalg.reduce { arith.addf } ins(%dk : tensor<8x2x4x6xf32>) outs(%z : tensor<2x4x6xf32>) dimensions = [0]
  return %g, %o : tensor<2x4x6xf32>, tensor<8x2x4x6xf32>
}

// -----

// Grouped heads with the samples along dimension 1 of the tensors (a
// sequence-first layout): the batch loop is d1, wherever the maps put it.
#gq = affine_map<(h, b, g, m, k1, k2, n) -> (m, b, h, g, k1)>
#gk = affine_map<(h, b, g, m, k1, k2, n) -> (k2, b, h, k1)>
#gv = affine_map<(h, b, g, m, k1, k2, n) -> (k2, b, h, n)>
#go = affine_map<(h, b, g, m, k1, k2, n) -> (m, b, h, g, n)>
#gl = affine_map<(h, b, g, m, k1, k2, n) -> (m, b, h, g)>
// CHECK-LABEL: func.func @grouped_sequence_first(
// CHECK:         scf.for
// CHECK:           ga.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.000000e+00 indexing_maps
// CHECK-SAME:        : tensor<5x2x2x3x4xf32>, tensor<5x2x2x4xf32>, tensor<5x2x2x4xf32> -> tensor<5x2x2x3x4xf32>, tensor<5x2x2x3xf32>
// CHECK:           tensor.insert_slice {{.*}} [5, 2, 2, 3, 4]
func.func @grouped_sequence_first(%q: tensor<5x8x2x3x4xf32> {ga.batch = 1 : i64}, %k: tensor<5x8x2x4xf32> {ga.batch = 1 : i64}) -> tensor<5x8x2x3x4xf32> {
  %o, %lse = ga.attention %q, %k, %k scale 1.0 indexing_maps [#gq, #gk, #gv, #go, #gl]
      : tensor<5x8x2x3x4xf32>, tensor<5x8x2x4xf32>, tensor<5x8x2x4xf32> -> tensor<5x8x2x3x4xf32>, tensor<5x8x2x3xf32>
  return %o : tensor<5x8x2x3x4xf32>
}
