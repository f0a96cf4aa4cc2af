// RUN: ga-opt %s | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | ga-opt | FileCheck %s
// RUN: ga-opt %s -emit-bytecode | ga-opt | FileCheck %s

// Round trip of ga.attention and ga.attention_backward
// (include/ga/IR/GAAttentionOps.td): causal, a padding mask broadcast over
// heads and queries, grouped key/value heads with a dynamic batch.

#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
#l = affine_map<(b, h, m, k1, k2, n) -> (b, h, m)>
// A padding mask [B, 1, 1, Tk]: broadcast over the heads and the queries.
#mask = affine_map<(b, h, m, k1, k2, n) -> (b, 0, 0, k2)>

// CHECK-LABEL: func.func @causal
// CHECK:         %[[O:.*]], %[[L:.*]] = ga.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 causal indexing_maps [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}] : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
// CHECK:         ga.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %{{.*}}, %[[L]] scale 1.250000e-01 causal indexing_maps
// CHECK-SAME:      -> tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>
func.func @causal(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x12x8xbf16>, %v: tensor<2x4x12x6xbf16>, %do: tensor<2x4x16x6xbf16>)
    -> (tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>) {
  %o, %lse = ga.attention %q, %k, %v scale 0.125 causal indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16> -> tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
  %dq, %dk, %dv = ga.attention_backward %q, %k, %v, %o, %do, %lse scale 0.125 causal indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>, tensor<2x4x16x6xbf16>, tensor<2x4x16x6xbf16>, tensor<2x4x16xf32>
      -> tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>
  return %dq, %dk, %dv : tensor<2x4x16x8xbf16>, tensor<2x4x12x8xbf16>, tensor<2x4x12x6xbf16>
}

// CHECK-LABEL: func.func @padding_mask
// CHECK:         ga.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<2x1x1x12xf32>) scale 5.000000e-01 indexing_maps
// CHECK:         ga.attention_backward {{.*}} mask(%{{.*}} : tensor<2x1x1x12xf32>) scale 5.000000e-01 indexing_maps
func.func @padding_mask(%q: tensor<2x4x16x8xf64>, %k: tensor<2x4x12x8xf64>, %v: tensor<2x4x12x8xf64>, %m: tensor<2x1x1x12xf32>, %do: tensor<2x4x16x8xf64>)
    -> tensor<2x4x12x8xf64> {
  %o, %lse = ga.attention %q, %k, %v mask(%m : tensor<2x1x1x12xf32>) scale 0.5 indexing_maps [#q, #k, #v, #mask, #o, #l]
      : tensor<2x4x16x8xf64>, tensor<2x4x12x8xf64>, tensor<2x4x12x8xf64> -> tensor<2x4x16x8xf64>, tensor<2x4x16xf64>
  %dq, %dk, %dv = ga.attention_backward %q, %k, %v, %o, %do, %lse mask(%m : tensor<2x1x1x12xf32>) scale 0.5 indexing_maps [#q, #k, #v, #mask, #o, #l]
      : tensor<2x4x16x8xf64>, tensor<2x4x12x8xf64>, tensor<2x4x12x8xf64>, tensor<2x4x16x8xf64>, tensor<2x4x16x8xf64>, tensor<2x4x16xf64>
      -> tensor<2x4x16x8xf64>, tensor<2x4x12x8xf64>, tensor<2x4x12x8xf64>
  return %dk : tensor<2x4x12x8xf64>
}

// Grouped key/value heads: 4 query heads as 2 key/value heads of 2 queries
// each (an m loop g that key and value do not index), and a dynamic batch.
// CHECK-LABEL: func.func @grouped_heads
// CHECK:         ga.attention {{.*}} : tensor<?x2x2x16x8xf32>, tensor<?x2x16x8xf32>, tensor<?x2x16x8xf32> -> tensor<?x2x2x16x8xf32>, tensor<?x2x2x16xf32>
#gq = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#gk = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#gv = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#go = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
#gl = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m)>
func.func @grouped_heads(%q: tensor<?x2x2x16x8xf32>, %k: tensor<?x2x16x8xf32>, %v: tensor<?x2x16x8xf32>) -> tensor<?x2x2x16x8xf32> {
  %o, %lse = ga.attention %q, %k, %v scale 0.35 causal indexing_maps [#gq, #gk, #gv, #go, #gl]
      : tensor<?x2x2x16x8xf32>, tensor<?x2x16x8xf32>, tensor<?x2x16x8xf32> -> tensor<?x2x2x16x8xf32>, tensor<?x2x2x16xf32>
  return %o : tensor<?x2x2x16x8xf32>
}
