// RUN: ga-opt %s -ga-place-buffers-on-device -split-input-file -verify-diagnostics

// After the loop mapping, no host code may read device memory: a buffer of
// the caller (device memory by the contract of the NVVM lowering) read on
// the host is an error at the load.
func.func @host_load(%x: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op accesses device memory on the host; the GPU lowering expects every such access inside a kernel}}
  %v = memref.load %x[%c0] : memref<64xf32>
  return %v : f32
}

// -----

// A device allocation written on the host.
func.func @host_store(%v: f32) {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<4xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %t[%tx] : memref<4xf32>
    gpu.terminator
  }
  // expected-error @+1 {{'memref.store' op accesses device memory on the host}}
  memref.store %v, %t[%c0] : memref<4xf32>
  return
}

// -----

// gpu.memcpy copies dense buffers; a strided view is a kernel's job.
func.func @strided_copy(%x: memref<8xf32>, %y: memref<4xf32>) {
  %s = memref.subview %x[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  // expected-error @+1 {{'memref.copy' op copies a strided view on the host; expected ga-linalg-to-gpu-loops to turn it into a kernel}}
  memref.copy %s, %y : memref<4xf32, strided<[2]>> to memref<4xf32>
  return
}
