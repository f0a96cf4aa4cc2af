// RUN: ga-opt %s -ga-mark-batch-args="batch-args=2,3:1" | FileCheck %s
// RUN: ga-opt %s -ga-mark-batch-args="func=private_step batch-args=0" | FileCheck %s --check-prefix=NAMED

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8xf32>,
// CHECK-SAME:      %{{.*}}: tensor<32x4xf32> {ga.batch = 0 : i64},
// CHECK-SAME:      %{{.*}}: tensor<8x32xf32> {ga.batch = 1 : i64})
// Private functions are marked only when named.
// CHECK-LABEL: func.func private @private_step(
// CHECK-NOT:     ga.batch
// NAMED-LABEL: func.func @step(
// NAMED-NOT:     ga.batch
// NAMED-LABEL: func.func private @private_step(
// NAMED-SAME:      {ga.batch = 0 : i64}
func.func @step(%w: tensor<4x8xf32>, %b: tensor<8xf32>, %x: tensor<32x4xf32>, %y: tensor<8x32xf32>) {
  return
}

func.func private @private_step(%x: tensor<32x4xf32>) {
  return
}
