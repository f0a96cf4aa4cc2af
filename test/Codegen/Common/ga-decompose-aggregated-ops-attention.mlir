// RUN: ga-opt %s -ga-decompose-aggregated-ops -split-input-file | FileCheck %s

// ga.attention and its backward decompose (DecomposeAttention.cpp) into
// linalg.generic ops on tensors: the scores [B, H, Tq, Tk] in the compute
// type (f32 for bf16), their row max and logsumexp over the key positions,
// the probabilities, then the products; the results rounded to bf16. The
// numbers are checked against float64 in test/Integration/CPU/attention.test.

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#l = affine_map<(b, h, m, k1, k2, n) -> (b, h, m)>

// CHECK-LABEL: func.func @forward
// CHECK-SAME:      (%[[Q:.*]]: tensor<2x4x16x8xbf16>, %[[K:.*]]: tensor<2x4x12x8xbf16>, %[[V:.*]]: tensor<2x4x12x6xbf16>)
// CHECK-NOT:     ga.attention
// CHECK:         %[[QK:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]{{.*}} ins(%[[Q]], %[[K]] : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>) outs(%{{.*}} : tensor<2x4x16x12xf32>)
// CHECK:           arith.extf
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[QK]] : tensor<2x4x16x12xf32>)
// CHECK:           linalg.index 2
// CHECK:           linalg.index 3
// CHECK:           arith.cmpi ugt
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<2x4x16x12xf32>) outs(%{{.*}} : tensor<2x4x16xf32>)
// CHECK:           arith.maxnumf
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[MAX]] : tensor<2x4x16x12xf32>, tensor<2x4x16xf32>)
// CHECK:         %[[LSE:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %[[MAX]] : tensor<2x4x16xf32>, tensor<2x4x16xf32>)
// CHECK:           math.log
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[LSE]] : tensor<2x4x16x12xf32>, tensor<2x4x16xf32>)
// CHECK:         %[[PV:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[V]] : tensor<2x4x16x12xf32>, tensor<2x4x12x6xbf16>) outs(%{{.*}} : tensor<2x4x16x6xf32>)
// CHECK:         %[[O:.*]] = linalg.generic {{.*}} ins(%[[PV]] : tensor<2x4x16x6xf32>) outs(%{{.*}} : tensor<2x4x16x6xbf16>)
// CHECK:           arith.truncf
// CHECK:         return %[[O]], %[[LSE]]
func.func @forward(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x12x8xbf16>, %v: tensor<2x4x12x6xbf16>) -> (tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>) {
  %o, %lse = ga.attention %q, %k, %v scale 0.125 causal indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
  return %o, %lse : tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
}

// -----

// The backward with a dynamic batch: the sizes come from the operands.
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#l = affine_map<(b, h, m, k1, k2, n) -> (b, h, m)>
// CHECK-LABEL: func.func @backward_dynamic
// CHECK-NOT:     ga.attention_backward
// CHECK:         tensor.dim %{{.*}}, %c0
// CHECK:         tensor.empty(%{{.*}}) : tensor<?x2x5x6xf64>
// CHECK:         math.exp
// CHECK-NOT:     ga.attention_backward
// CHECK:         return
func.func @backward_dynamic(%q: tensor<?x2x5x3xf64>, %k: tensor<?x2x6x3xf64>, %v: tensor<?x2x6x3xf64>, %out: tensor<?x2x5x3xf64>, %do: tensor<?x2x5x3xf64>, %lse: tensor<?x2x5xf64>)
    -> (tensor<?x2x5x3xf64>, tensor<?x2x6x3xf64>, tensor<?x2x6x3xf64>) {
  %dq, %dk, %dv = ga.attention_backward %q, %k, %v, %out, %do, %lse scale 0.5 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<?x2x5x3xf64>, tensor<?x2x6x3xf64>, tensor<?x2x6x3xf64>, tensor<?x2x5x3xf64>, tensor<?x2x5x3xf64>, tensor<?x2x5xf64>
      -> tensor<?x2x5x3xf64>, tensor<?x2x6x3xf64>, tensor<?x2x6x3xf64>
  return %dq, %dk, %dv : tensor<?x2x5x3xf64>, tensor<?x2x6x3xf64>, tensor<?x2x6x3xf64>
}
