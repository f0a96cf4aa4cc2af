// RUN: ga-opt %s -split-input-file -verify-diagnostics

// Every verifier message of ga.attention and ga.attention_backward.

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>

func.func @map_count(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expects 5 indexing maps (query, key, value, output, logsumexp) or 6 (with the mask), got 4}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
#mask = affine_map<(b, m, k1, k2, n) -> (b, m, k2)>
func.func @mask_without_map(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xf32>) {
  // expected-error @+1 {{has 5 indexing maps, expected 6 (with the mask)}}
  %o, %lse = ga.attention %q, %q, %q mask(%m : tensor<2x4x4xf32>) scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1 + 1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @compound(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{the map of key must index it by distinct plain loops}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

// The key indexed by the query position: no role for m.
#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (m, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @no_role(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{loop d0 has no attention role}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n, k3) -> (b, m, k1, k3)>
#k = affine_map<(b, m, k1, k2, n, k3) -> (b, k2, k1, k3)>
#v = affine_map<(b, m, k1, k2, n, k3) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n, k3) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n, k3) -> (b, m)>
func.func @two_k1(%q: tensor<2x4x8x2xf32>, %v: tensor<2x4x8xf32>) {
  // expected-error @+1 {{loops d2 and d5 are both query/key head dimension (k1) loops; there must be exactly one}}
  %o, %lse = ga.attention %q, %q, %v scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8x2xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (m, b)>
func.func @lse_map(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{the map of logsumexp must be the output's without its n loop d4}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<4x2xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @extent(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error @+1 {{loop d3 has extent 6 in key but 5 in value}}
  %o, %lse = ga.attention %q, %k, %v scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x5x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @rank(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{the map of logsumexp has 2 results for its rank 3}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x1xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
#mask = affine_map<(b, m, k1, k2, n) -> (b, 0, k2)>
func.func @broadcast_size(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xf32>) {
  // expected-error @+1 {{dimension 1 of mask is broadcast (a constant index) but has size 4, not 1}}
  %o, %lse = ga.attention %q, %q, %q mask(%m : tensor<2x4x4xf32>) scale 1.0 indexing_maps [#q, #k, #v, #mask, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
#mask = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
func.func @mask_loop(%q: tensor<2x4x8xf32>, %m: tensor<2x4x8xf32>) {
  // expected-error @+1 {{the mask is indexed by the query/key head dimension (k1) loop d2; it may be indexed by batch, m and k2 loops only}}
  %o, %lse = ga.attention %q, %q, %q mask(%m : tensor<2x4x8xf32>) scale 1.0 indexing_maps [#q, #k, #v, #mask, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
#mask = affine_map<(b, m, k1, k2, n) -> (b, m, k2)>
func.func @boolean_mask(%q: tensor<2x4x8xf32>, %m: tensor<2x4x4xi1>) {
  // expected-error @+1 {{the mask must hold floats (added to the scores, -inf where masked), got 'tensor<2x4x4xi1>'}}
  %o, %lse = ga.attention %q, %q, %q mask(%m : tensor<2x4x4xi1>) scale 1.0 indexing_maps [#q, #k, #v, #mask, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @mixed_types(%q: tensor<2x4x8xbf16>, %k: tensor<2x4x8xf32>) {
  // expected-error @+1 {{query, key and value must hold the same float type}}
  %o, %lse = ga.attention %q, %k, %k scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xbf16>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xbf16>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @output_type(%q: tensor<2x4x8xbf16>) {
  // expected-error @+1 {{the output must hold 'bf16' like the query, got 'tensor<2x4x8xf32>'}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @lse_type(%q: tensor<2x4x8xbf16>) {
  // expected-error @+1 {{the logsumexp must hold the compute type 'f32' of 'bf16', got 'tensor<2x4xbf16>'}}
  %o, %lse = ga.attention %q, %q, %q scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>, tensor<2x4xbf16>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @grad_output(%q: tensor<2x4x8xf32>, %lse: tensor<2x4xf32>, %do: tensor<2x4x6xf32>) {
  // expected-error @+1 {{grad_output 'tensor<2x4x6xf32>' must have the type of output 'tensor<2x4x8xf32>'}}
  %dq, %dk, %dv = ga.attention_backward %q, %q, %q, %q, %do, %lse scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>, tensor<2x4xf32>
      -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return
}

// -----

#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
#l = affine_map<(b, m, k1, k2, n) -> (b, m)>
func.func @gradient_type(%q: tensor<2x4x8xbf16>, %lse: tensor<2x4xf32>) {
  // expected-error @+1 {{the gradient of key 'tensor<2x4x8xf32>' must have its type 'tensor<2x4x8xbf16>'}}
  %dq, %dk, %dv = ga.attention_backward %q, %q, %q, %q, %q, %lse scale 1.0 indexing_maps [#q, #k, #v, #o, #l]
      : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4xf32>
      -> tensor<2x4x8xbf16>, tensor<2x4x8xf32>, tensor<2x4x8xbf16>
  return
}
