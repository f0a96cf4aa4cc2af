// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-fuse-accumulation="require-fusion=true"

func.func @not_neutral(%x: tensor<8xf32>, %init: tensor<f32>, %acc: tensor<f32>) -> tensor<f32> {
  %p = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%init : tensor<f32>) dimensions = [0]
  // expected-error @+1 {{accumulation cannot be fused into its producer: the producer does not start from the neutral element of the accumulation}}
  %r = ga.accumulate <add> %p into %acc : tensor<f32> into tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @other_use(%x: tensor<8xf32>, %acc: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %z = arith.constant dense<0.0> : tensor<f32>
  %p = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%z : tensor<f32>) dimensions = [0]
  // expected-error @+1 {{the partial result has other uses}}
  %r = ga.accumulate <add> %p into %acc : tensor<f32> into tensor<f32>
  return %r, %p : tensor<f32>, tensor<f32>
}

// -----

func.func @other_kind(%x: tensor<8xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %z = arith.constant dense<0.0> : tensor<f32>
  %p = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%z : tensor<f32>) dimensions = [0]
  // expected-error @+1 {{the producer does not start from the neutral element of the accumulation}}
  %r = ga.accumulate <maxnumf> %p into %acc : tensor<f32> into tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @not_linalg(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %p = arith.negf %x : tensor<8xf32>
  // expected-error @+1 {{the partial result is not produced by a linalg op on tensors}}
  %r = ga.accumulate <add> %p into %acc : tensor<8xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @argument(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{the partial result is not produced by an op}}
  %r = ga.accumulate <add> %x into %acc : tensor<8xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}
