// RUN: ga-opt %s -ga-emit-packed-interfaces -split-input-file -verify-diagnostics
// RUN: not ga-opt %s -ga-emit-packed-interfaces -split-input-file 2>&1 | FileCheck %s

// A C interface asked for, but the pass runs before func-to-llvm made the
// wrapper: reported at the function.
// CHECK: ga-emit-packed-interfaces-invalid.mlir:[[@LINE+2]]:1: error: 'step' asks for a C interface (llvm.emit_c_interface) but the module defines no @_mlir_ciface_step
// expected-error @+1 {{'step' asks for a C interface (llvm.emit_c_interface) but the module defines no @_mlir_ciface_step: run --ga-emit-packed-interfaces after --convert-func-to-llvm}}
llvm.func @step(%x: f32) -> f32 attributes {llvm.emit_c_interface} {
  llvm.return %x : f32
}

// -----

// A variadic wrapper has no fixed list of parameters to read.
llvm.func @f(%x: f32) attributes {llvm.emit_c_interface} {
  llvm.return
}
// expected-error @+1 {{@_mlir_ciface_f is variadic: a packed entry point needs a fixed list of parameters}}
llvm.func @_mlir_ciface_f(%x: f32, ...) {
  llvm.return
}

// -----

// The name of the packed entry point is taken.
llvm.func @g(%x: f32) attributes {llvm.emit_c_interface} {
  llvm.return
}
llvm.func @_mlir_ciface_g(%x: f32) attributes {llvm.emit_c_interface} {
  llvm.return
}
// expected-error @+1 {{the symbol @_ga_packed_g exists already: it is the name of the packed entry point of @g}}
llvm.func @_ga_packed_g(%p: !llvm.ptr) {
  llvm.return
}
