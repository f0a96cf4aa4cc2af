// RUN: ga-opt %s -split-input-file --ga-capture-cuda-graphs | FileCheck %s

// A micro-batch loop whose body is the same in every iteration: recorded
// once between begin and end capture on the step's stream (the launches and
// the library call, in order, after the token the loop started from), then
// launched as a graph once per iteration; the graph is released after the
// loop (stream-ordered in the driver), before the host waits.
// CHECK-LABEL: func.func @capture(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    %[[F:.*]] = gpu.launch_func async [%[[S]]] @k::@fill
// CHECK-NEXT:    call @mgpuGraphBeginCapture(%[[F]]) : (!gpu.async.token) -> ()
// CHECK-NEXT:    %[[A:.*]] = gpu.launch_func async [%[[F]]] @k::@acc
// CHECK-NEXT:    %[[L:.*]] = ga.blas_matmul async [%[[A]]] %{{.*}}, %{{.*}}, %{{.*}} {accumulate} : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>
// CHECK-NEXT:    %[[B:.*]] = gpu.launch_func async [%[[L]]] @k::@acc
// CHECK-NEXT:    %[[G:.*]] = call @mgpuGraphEndCapture(%[[B]]) : (!gpu.async.token) -> !llvm.ptr
// CHECK-NEXT:    %[[T:.*]] = scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[D:.*]] = %[[B]]) -> (!gpu.async.token) {
// CHECK-NEXT:      func.call @mgpuGraphLaunch(%[[G]], %[[D]]) : (!llvm.ptr, !gpu.async.token) -> ()
// CHECK-NEXT:      scf.yield %[[D]] : !gpu.async.token
// CHECK-NEXT:    }
// CHECK-NEXT:    call @mgpuGraphDestroy(%[[G]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    call @mgpuStreamSynchronize(%[[T]])
// CHECK-NEXT:    call @mgpuStreamDestroy(%[[T]])
// CHECK-NEXT:    return
// CHECK-DAG:   func.func private @mgpuGraphBeginCapture(!gpu.async.token)
// CHECK-DAG:   func.func private @mgpuGraphEndCapture(!gpu.async.token) -> !llvm.ptr
// CHECK-DAG:   func.func private @mgpuGraphLaunch(!llvm.ptr, !gpu.async.token)
// CHECK-DAG:   func.func private @mgpuGraphDestroy(!llvm.ptr)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill(%m: memref<4xf32>) kernel { gpu.return }
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
  func.func private @mgpuStreamSynchronize(!gpu.async.token)
  func.func private @mgpuStreamDestroy(!gpu.async.token)
  func.func @capture(%m: memref<4xf32>, %w: memref<2x2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %null = llvm.mlir.zero : !llvm.ptr
    %s = gpu.wait async
    %f = gpu.launch_func async [%s] @k::@fill blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %f) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
      %l = ga.blas_matmul async [%a] %w, %w, %w {accumulate} : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>
      %b = gpu.launch_func async [%l] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
      scf.yield %b : !gpu.async.token
    }
    func.call @mgpuStreamSynchronize(%t) : (!gpu.async.token) -> ()
    func.call @mgpuStreamDestroy(%t) : (!gpu.async.token) -> ()
    return
  }
}

// -----

// A batch that the micro-batch count does not divide: the loop of the
// remainder micro-batch runs once and is launched directly (a graph replayed
// once would only add its capture and instantiation). Pure host ops of the
// captured body (a view of a device buffer) are computed once, at capture.
// CHECK-LABEL: func.func @remainder(
// CHECK:         call @mgpuGraphBeginCapture
// CHECK-NEXT:    memref.subview
// CHECK-NEXT:    gpu.launch_func
// CHECK-NEXT:    %[[G1:.*]] = call @mgpuGraphEndCapture
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK-NEXT:      func.call @mgpuGraphLaunch(%[[G1]]
// CHECK:         call @mgpuGraphDestroy(%[[G1]])
// CHECK-NOT:     mgpuGraph
// CHECK:         scf.for %{{.*}} = %c0 to %c1 step %c1
// CHECK-NEXT:      gpu.launch_func async {{.*}} @k::@acc
// CHECK-NOT:     mgpuGraph
// CHECK:         return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<8xf32>) kernel { gpu.return }
    gpu.func @rest(%m: memref<4xf32, strided<[1]>>) kernel { gpu.return }
  }
  func.func @remainder(%m: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %v = memref.subview %m[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
      %a = gpu.launch_func async [%d] @k::@rest blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%v : memref<4xf32, strided<[1]>>)
      scf.yield %a : !gpu.async.token
    }
    %u = scf.for %i = %c0 to %c1 step %c1 iter_args(%d = %t) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    gpu.wait [%u]
    return
  }
}

// -----

// A loop nested in the body that carries the stream's token (the groups of a
// grouped convolution as library products): captured with the body, since
// stream capture records the work of every inner iteration.
// CHECK-LABEL: func.func @nested(
// CHECK:         call @mgpuGraphBeginCapture
// CHECK:         scf.for %{{.*}} = %c0 to %c2
// CHECK:           ga.blas_matmul async
// CHECK:         call @mgpuGraphEndCapture
// CHECK:         scf.for %{{.*}} = %c0 to %c4
// CHECK-NEXT:      func.call @mgpuGraphLaunch
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
  func.func @nested(%m: memref<4xf32>, %w: memref<2x2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %g = scf.for %j = %c0 to %c2 step %c1 iter_args(%e = %d) -> (!gpu.async.token) {
        %l = ga.blas_matmul async [%e] %w, %w, %w {accumulate} : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>
        scf.yield %l : !gpu.async.token
      }
      %a = gpu.launch_func async [%g] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
      scf.yield %a : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}
