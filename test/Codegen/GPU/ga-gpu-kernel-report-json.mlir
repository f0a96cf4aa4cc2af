// RUN: ga-opt %s -ga-gpu-kernel-report="format=json" -o /dev/null | FileCheck %s
// RUN: echo 'module {}' | ga-opt --ga-lower-to-gpu-kernels="library-calls=0" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPS

// The kernel stage with library-calls=0 ends before the products become
// calls: the form this report reads.
// OPS: ga-capture-cuda-graphs
// OPS-NOT: ga-lower-library-ops

// The launch structure of a kernel-stage module, read from its ops: the
// kernel loads its first parameter and stores its second (first a write);
// the launch inside the micro-batch loop passes a view of %acc, reported as
// %acc; the product with {accumulate} has beta = 1 and m x n x k from its
// types (lhs transposed: k is its first dimension).
module attributes {gpu.container_module} {
  func.func @step(%x: memref<4x8xf32>, %w: memref<4x2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %t0 = gpu.wait async
    %acc, %t1 = gpu.alloc async [%t0] () : memref<8x2xf32>
    %y, %t2 = gpu.alloc async [%t1] () : memref<4x8xf32>
    %t3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %t2) -> (!gpu.async.token) {
      %view = memref.subview %acc[0, 0] [8, 2] [1, 1] : memref<8x2xf32> to memref<8x2xf32, strided<[2, 1]>>
      %a = gpu.launch_func async [%t] @kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%x : memref<4x8xf32>, %y : memref<4x8xf32>)
      %b = ga.blas_matmul async [%a] %y, %w, %view {accumulate, transpose_lhs} : memref<4x8xf32>, memref<4x2xf32>, memref<8x2xf32, strided<[2, 1]>>
      scf.yield %b : !gpu.async.token
    }
    gpu.wait [%t3]
    return
  }
  gpu.module @kernels {
    gpu.func @copy(%in: memref<4x8xf32>, %out: memref<4x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %in[%c0, %c0] : memref<4x8xf32>
      memref.store %v, %out[%c0, %c0] : memref<4x8xf32>
      gpu.return
    }
  }
}

// CHECK:      "kernels": {
// CHECK-NEXT:  "copy": {
// CHECK-NEXT:   "params": 2,
// CHECK-NEXT:   "accesses": [
// CHECK-NEXT:    {
// CHECK-NEXT:     "param": 0,
// CHECK-NEXT:     "read": true,
// CHECK-NEXT:     "written": false,
// CHECK-NEXT:     "first": "read"
// CHECK:          "param": 1,
// CHECK-NEXT:     "read": false,
// CHECK-NEXT:     "written": true,
// CHECK-NEXT:     "first": "write"
// CHECK:      "buffers": {
// CHECK-NEXT:  "%memref": {
// CHECK-NEXT:   "type": "memref<8x2xf32>",
// CHECK-NEXT:   "bytes": 64,
// CHECK-NEXT:   "loop": null
// CHECK:      "launches": [
// CHECK:        "kernel": "copy",
// CHECK-NEXT:   "module": "kernels",
// CHECK-NEXT:   "grid": [
// CHECK-NEXT:    1,
// CHECK:        "args": [
// CHECK-NEXT:    "%arg0",
// CHECK-NEXT:    "%memref_0"
// CHECK-NEXT:   ],
// CHECK-NEXT:   "loop": 1
// CHECK:        "kernel": "blas_matmul#0",
// CHECK-NEXT:   "library": true,
// CHECK-NEXT:   "beta": 1,
// CHECK-NEXT:   "product": {
// CHECK-NEXT:    "batch": 1,
// CHECK-NEXT:    "m": 8,
// CHECK-NEXT:    "n": 2,
// CHECK-NEXT:    "k": 4,
// CHECK-NEXT:    "types": "f32 x f32 -> f32",
// CHECK-NEXT:    "bias": false
// CHECK-NEXT:   },
// CHECK-NEXT:   "buffers": {
// CHECK-NEXT:    "a": "%memref_0",
// CHECK-NEXT:    "b": "%arg1",
// CHECK-NEXT:    "c": "%memref"
// CHECK-NEXT:   },
// CHECK-NEXT:   "loop": 1
// CHECK:      "loops": [
// CHECK-NEXT:  {
// CHECK-NEXT:   "id": 1,
// CHECK-NEXT:   "captured": false,
// CHECK-NEXT:   "outermost": true
// CHECK:      "memcpy_in_loop": 0,
// CHECK:      "ptx": []
