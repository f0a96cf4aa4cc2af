// RUN: ga-opt %s -split-input-file -ga-fuse-accumulation | FileCheck %s

// C = fill(0); C += A * B; acc += C   becomes   acc += A * B.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x2xf32>, %[[ACC:.*]]: tensor<4x2xf32>)
// CHECK-NOT:     ga.accumulate
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x2xf32>) outs(%[[ACC]] : tensor<4x2xf32>)
// CHECK:         return %[[R]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = ga.accumulate <add> %p into %acc : tensor<4x2xf32> into tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// A max over the batch starting from -inf (a splat constant).
// CHECK-LABEL: func.func @max(
// CHECK-SAME:      %[[X:.*]]: tensor<8xf32>, %[[ACC:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = linalg.reduce { arith.maxnumf } ins(%[[X]] : tensor<8xf32>) outs(%[[ACC]] : tensor<f32>)
// CHECK:         return %[[R]]
func.func @max(%x: tensor<8xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %p = linalg.reduce { arith.maxnumf } ins(%x : tensor<8xf32>) outs(%ninf : tensor<f32>) dimensions = [0]
  %r = ga.accumulate <maxnumf> %p into %acc : tensor<f32> into tensor<f32>
  return %r : tensor<f32>
}

// -----

// A bf16 GEMM accumulating into an f32 buffer: the producer is generalized
// and combines in f32 (the products are still formed in bf16, as in the
// full-batch step).
// CHECK-LABEL: func.func @widen(
// CHECK-SAME:      %[[ACC:[a-z0-9]+]]: tensor<4x2xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%[[ACC]] : tensor<4x2xf32>)
// CHECK:         ^bb0(%[[IN0:.*]]: bf16, %[[IN1:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK:           %[[MUL:.*]] = arith.mulf %[[IN0]], %[[IN1]] : bf16
// CHECK:           %[[EXT:.*]] = arith.extf %[[MUL]] : bf16 to f32
// CHECK:           %[[ADD:.*]] = arith.addf %[[OUT]], %[[EXT]] : f32
// CHECK:           linalg.yield %[[ADD]] : f32
// CHECK:         } -> tensor<4x2xf32>
// CHECK:         return %[[R]]
func.func @widen(%a: tensor<4x8xbf16>, %b: tensor<8x2xbf16>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c0 = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x2xbf16>
  %z = linalg.fill ins(%c0 : bf16) outs(%e : tensor<4x2xbf16>) -> tensor<4x2xbf16>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%z : tensor<4x2xbf16>) -> tensor<4x2xbf16>
  %r = ga.accumulate <add> %p into %acc : tensor<4x2xbf16> into tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Not fused: the producer starts from a value that is not neutral, so the
// accumulation stays a separate combine.
// CHECK-LABEL: func.func @not_neutral(
// CHECK:         %[[P:.*]] = linalg.reduce
// CHECK:         ga.accumulate <add> %[[P]]
func.func @not_neutral(%x: tensor<8xf32>, %init: tensor<f32>, %acc: tensor<f32>) -> tensor<f32> {
  %p = linalg.reduce { arith.addf } ins(%x : tensor<8xf32>) outs(%init : tensor<f32>) dimensions = [0]
  %r = ga.accumulate <add> %p into %acc : tensor<f32> into tensor<f32>
  return %r : tensor<f32>
}
