// RUN: ga-opt %s -split-input-file -verify-diagnostics -test-ga-memory-usage -o /dev/null

// What the analysis cannot count exactly is refused at the op.

func.func @dynamic(%n: index) {
  // expected-error @+1 {{memory report: the size of this allocation ('memref<?xf32>') is only known at run time}}
  %a = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return
}

// -----

// expected-error @+1 {{memory report: the size of argument #0 ('memref<?xf32>') is only known at run time}}
func.func @dynamic_argument(%x: memref<?xf32>) {
  return
}

// -----

func.func @foreign_free(%x: memref<4xf32>) {
  // expected-error @+1 {{memory report: cannot tell which allocation of the function this frees}}
  memref.dealloc %x : memref<4xf32>
  return
}

// -----

func.func @leaking_loop() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{memory report: a region of this op does not free the 16 bytes it allocates}}
  scf.for %i = %c0 to %c1 step %c1 {
    %a = memref.alloc() : memref<4xf32>
  }
  return
}

// -----

func.func private @helper() -> memref<4xf32>
func.func @calls() {
  // expected-error @+1 {{memory report: calls are not followed; inline the callee first}}
  %m = func.call @helper() : () -> memref<4xf32>
  return
}

// -----

func.func @realloc() {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{memory report: this op allocates or frees memory the report cannot count}}
  %b = memref.realloc %a : memref<4xf32> to memref<8xf32>
  return
}
