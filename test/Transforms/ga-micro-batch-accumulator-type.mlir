// RUN: ga-opt %s -ga-micro-batch="micro-batches=2 accumulator-type=f32" | FileCheck %s

// bf16 gradients accumulate in an f32 buffer: the neutral init is created in
// f32, each micro-batch's bf16 partial is extended when accumulated, and the
// result is rounded to bf16 once, where the optimizer consumes it.
// CHECK-LABEL: func.func @bf16_grad(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:         %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<4x2xf32>)
// CHECK:           %[[P:.*]] = linalg.matmul {{.*}} -> tensor<4x2xbf16>
// CHECK:           ga.accumulate <add> %[[P]] into %[[ACC]] : tensor<4x2xbf16> into tensor<4x2xf32>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[LOOP]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         return %[[G]]
func.func @bf16_grad(%x: tensor<8x4xbf16> {ga.batch = 0 : i64}, %dy: tensor<8x2xbf16> {ga.batch = 0 : i64}) -> tensor<4x2xbf16> {
  %c0 = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x2xbf16>
  %z = linalg.fill ins(%c0 : bf16) outs(%e : tensor<4x2xbf16>) -> tensor<4x2xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<8x4xbf16>, tensor<8x2xbf16>) outs(%z : tensor<4x2xbf16>) -> tensor<4x2xbf16>
  return %dw : tensor<4x2xbf16>
}
