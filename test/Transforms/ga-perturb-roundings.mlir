// RUN: ga-opt %s --ga-perturb-roundings | FileCheck %s

// Every rounding op of the copy moves by xi * units * 2u |r| (computed in
// f64, rounded back), xi from a hash of the seed (the added i64 argument),
// the op's number and the element's loop indices; exact ops (max) are left
// alone. The original is unchanged.
// CHECK-LABEL: func.func @step(
// CHECK-NOT:     arith.xori
// CHECK-LABEL: func.func @step_perturbed(
// CHECK-SAME:      %[[SEED:[a-z0-9]+]]: i64) -> tensor<4x3xf32>
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[P:.*]] = arith.mulf
// CHECK:           arith.xori %[[SEED]]
// CHECK:           %[[W:.*]] = arith.extf %[[P]] : f32 to f64
// CHECK:           %[[M:.*]] = math.absf %[[W]] : f64
// CHECK:           arith.constant 1.1920928955078125E-7 : f64
// CHECK:           %[[T:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:           %[[PP:.*]] = arith.select %{{.*}}, %[[T]], %[[P]] : f32
// CHECK:           %[[S:.*]] = arith.addf %{{.*}}, %[[PP]] : f32
// CHECK:           linalg.yield
// CHECK:         linalg.generic
// CHECK:           %[[E:.*]] = math.exp
// CHECK:           arith.constant 4.76837158203125E-7 : f64
// CHECK:           %[[MX:.*]] = arith.maximumf
// CHECK-NOT:       arith.extf %[[MX]]
// CHECK:           linalg.yield
func.func @step(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %x = math.exp %m : tensor<4x3xf32>
  %zt = arith.constant dense<0.0> : tensor<4x3xf32>
  %r = arith.maximumf %x, %zt : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
