// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-expand-accumulate

// The pass expands only what the verifier accepts: malformed accumulations
// are reported at their location before it runs.

func.func @shape(%p: tensor<4xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{partial 'tensor<4xf32>' and accumulator 'tensor<8xf32>' must have the same shape}}
  %r = ga.accumulate <add> %p into %acc : tensor<4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @kind(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combining kind 'maxsi' is not defined on 'f32'}}
  %r = ga.accumulate <maxsi> %p into %acc : tensor<4xf32> into tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @narrowing(%p: tensor<4xf32>, %acc: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{partial element type 'f32' must equal the accumulator's 'bf16' or be a narrower float}}
  %r = ga.accumulate <add> %p into %acc : tensor<4xf32> into tensor<4xbf16>
  return %r : tensor<4xbf16>
}
