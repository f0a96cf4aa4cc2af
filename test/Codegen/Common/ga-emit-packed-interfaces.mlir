// RUN: ga-opt %s -ga-emit-packed-interfaces | FileCheck %s

// A wrapper that returns a scalar: its parameters are read through the
// slots (the address of each parameter: of the descriptor's pointer, of the
// scalar), its result stored at the address in the slot after them.
llvm.func @step(%a: !llvm.ptr, %b: !llvm.ptr, %o: i64, %s: i64, %st: i64, %lr: f32) -> f32 attributes {llvm.emit_c_interface} {
  llvm.return %lr : f32
}
llvm.func @_mlir_ciface_step(%x: !llvm.ptr, %lr: f32) -> f32 attributes {llvm.emit_c_interface} {
  llvm.return %lr : f32
}

// CHECK-LABEL: llvm.func @_mlir_ciface_step(
// CHECK-LABEL: llvm.func @_ga_packed_step(
// CHECK-SAME:      %[[ARGS:.*]]: !llvm.ptr) {
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[X:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[LR:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// CHECK:         %[[R:.*]] = llvm.call @_mlir_ciface_step(%[[X]], %[[LR]]) : (!llvm.ptr, f32) -> f32
// CHECK:         %[[S2:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[P2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.store %[[R]], %[[P2]] : f32, !llvm.ptr
// CHECK:         llvm.return

// A wrapper that returns nothing (results through the structure it takes
// first, by pointer like a descriptor): no store.
llvm.func @two(%a: !llvm.ptr) attributes {llvm.emit_c_interface} {
  llvm.return
}
llvm.func @_mlir_ciface_two(%results: !llvm.ptr, %x: !llvm.ptr, %n: i64) attributes {llvm.emit_c_interface} {
  llvm.return
}

// CHECK-LABEL: llvm.func @_ga_packed_two(
// CHECK-COUNT-3: llvm.getelementptr
// CHECK:         llvm.call @_mlir_ciface_two({{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT:     llvm.store
// CHECK:         llvm.return

// No C interface asked for, or only declared: nothing is emitted (nor for
// the wrappers, which carry the mark too).
llvm.func @plain(%x: f32) -> f32 {
  llvm.return %x : f32
}
llvm.func @external(f32) -> f32 attributes {llvm.emit_c_interface}

// CHECK-NOT: @_ga_packed__mlir_ciface_
// CHECK-NOT: @_ga_packed_plain
// CHECK-NOT: @_ga_packed_external
