// RUN: ga-opt %s -split-input-file -ga-expand-accumulate | FileCheck %s

// CHECK: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add(
// CHECK-SAME:      %[[P:.*]]: tensor<4x2xf32>, %[[ACC:.*]]: tensor<4x2xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]] : tensor<4x2xf32>) outs(%[[ACC]] : tensor<4x2xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK:           %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK:           linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @add(%p: tensor<4x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = ga.accumulate <add> %p into %acc : tensor<4x2xf32> into tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// A narrower partial is extended first; integer and max kinds use their own
// combiner.
// CHECK-LABEL: func.func @kinds(
// CHECK:         ^bb0(%[[IN:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK:           %[[E:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:           arith.addf %[[OUT]], %[[E]] : f32
// CHECK:         ^bb0(%[[IIN:.*]]: i64, %[[IOUT:.*]]: i64):
// CHECK:           arith.addi %[[IOUT]], %[[IIN]] : i64
// CHECK:         ^bb0(%[[FIN:.*]]: f32, %[[FOUT:.*]]: f32):
// CHECK:           arith.maxnumf %[[FOUT]], %[[FIN]] : f32
// CHECK-NOT:     ga.accumulate
func.func @kinds(%p: tensor<4xbf16>, %acc: tensor<4xf32>, %c: tensor<i64>, %cacc: tensor<i64>,
                 %m: tensor<f32>, %macc: tensor<f32>) -> (tensor<4xf32>, tensor<i64>, tensor<f32>) {
  %r = ga.accumulate <add> %p into %acc : tensor<4xbf16> into tensor<4xf32>
  %s = ga.accumulate <add> %c into %cacc : tensor<i64> into tensor<i64>
  %t = ga.accumulate <maxnumf> %m into %macc : tensor<f32> into tensor<f32>
  return %r, %s, %t : tensor<4xf32>, tensor<i64>, tensor<f32>
}
