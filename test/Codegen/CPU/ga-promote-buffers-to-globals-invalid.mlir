// RUN: ga-opt %s -ga-promote-buffers-to-globals -split-input-file -verify-diagnostics
// RUN: not ga-opt %s -ga-promote-buffers-to-globals="alignment=48" 2>&1 | FileCheck %s

// CHECK: error: ga-promote-buffers-to-globals: alignment must be a power of two, got 48

// Recursive calls would share the static buffers: the function keeps its
// temporaries on the heap and says so.
// expected-warning @+1 {{temporaries of recursive function @recurse stay on the heap: recursive calls would share static storage}}
func.func @recurse(%n: index) {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<8xf32>
  %stop = arith.cmpi eq, %n, %c0 : index
  scf.if %stop {
  } else {
    %c1 = arith.constant 1 : index
    %m = arith.subi %n, %c1 : index
    func.call @recurse(%m) : (index) -> ()
  }
  memref.dealloc %t : memref<8xf32>
  return
}
