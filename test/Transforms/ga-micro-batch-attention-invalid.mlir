// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-micro-batch="micro-batches=4"

// What the batch analysis refuses in ga.attention (BatchAttention.cpp): a
// micro-batch is a tile of a batch loop of the attention only.

// Queries that are parameters attend to the samples as keys: every output
// combines every sample.
#q = affine_map<(m, k1, k2, n) -> (m, k1)>
#k = affine_map<(m, k1, k2, n) -> (k2, k1)>
#v = affine_map<(m, k1, k2, n) -> (k2, n)>
#o = affine_map<(m, k1, k2, n) -> (m, n)>
#l = affine_map<(m, k1, k2, n) -> (m)>
func.func @samples_as_keys(%q: tensor<4x6xf32>, %x: tensor<8x6xf32> {ga.batch = 0 : i64}) -> tensor<4x6xf32> {
  // expected-error @+1 {{operand #1 is per-sample along the key position (k2) loop d2 of the attention: only a batch loop (one that indexes query, key, value and output) keeps samples apart}}
  %o, %lse = ga.attention %q, %x, %x scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<4x6xf32>, tensor<8x6xf32>, tensor<8x6xf32> -> tensor<4x6xf32>, tensor<4xf32>
  return %o : tensor<4x6xf32>
}

// -----

// Two batch loops, the query per-sample along one and the key along the
// other.
#q = affine_map<(a, b, m, k1, k2, n) -> (a, b, m, k1)>
#k = affine_map<(a, b, m, k1, k2, n) -> (a, b, k2, k1)>
#v = affine_map<(a, b, m, k1, k2, n) -> (a, b, k2, n)>
#o = affine_map<(a, b, m, k1, k2, n) -> (a, b, m, n)>
#l = affine_map<(a, b, m, k1, k2, n) -> (a, b, m)>
func.func @two_batch_loops(%q: tensor<8x8x4x6xf32> {ga.batch = 0 : i64}, %k: tensor<8x8x4x6xf32> {ga.batch = 1 : i64}) -> tensor<8x8x4x6xf32> {
  // expected-error @+1 {{operands #0 and #1 are per-sample along different loops (d0 and d1), which attends every sample to every other}}
  %o, %lse = ga.attention %q, %k, %k scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<8x8x4x6xf32>, tensor<8x8x4x6xf32>, tensor<8x8x4x6xf32> -> tensor<8x8x4x6xf32>, tensor<8x8x4xf32>
  return %o : tensor<8x8x4x6xf32>
}
