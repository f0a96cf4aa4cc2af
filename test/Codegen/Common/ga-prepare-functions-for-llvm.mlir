// RUN: ga-opt %s -ga-prepare-functions-for-llvm | FileCheck %s
// RUN: ga-opt %s -ga-prepare-functions-for-llvm="c-interface=1" | FileCheck %s --check-prefix=CIFACE

// The ga.* argument attributes go; other argument attributes stay.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %{{.*}}: memref<8x4xf32>, %{{.*}}: memref<4xf32> {llvm.noalias})
// CHECK-NOT:     ga.
// CHECK-NOT:     llvm.emit_c_interface

// c-interface=1: public definitions get a C wrapper; private functions and
// declarations do not.
// CIFACE-LABEL: func.func @step(
// CIFACE-SAME:    attributes {llvm.emit_c_interface}
// CIFACE-LABEL: func.func private @helper(
// CIFACE-NOT:     llvm.emit_c_interface
// CIFACE-LABEL: func.func private @external(
// CIFACE-NOT:     llvm.emit_c_interface
func.func @step(%x: memref<8x4xf32> {ga.batch = 0 : i64, ga.init = "uniform"},
                %w: memref<4xf32> {llvm.noalias}) {
  return
}
func.func private @helper(%x: memref<8x4xf32> {ga.batch = 0 : i64}) {
  return
}
func.func private @external(memref<4xf32>)
