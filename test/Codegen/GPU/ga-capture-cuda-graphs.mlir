// RUN: ga-opt %s -split-input-file --ga-capture-cuda-graphs | FileCheck %s
// RUN: ga-opt %s -split-input-file --ga-capture-cuda-graphs --ga-lower-library-ops | FileCheck %s --check-prefix=CALLS

// A micro-batch loop whose body is the same in every iteration: recorded
// once between begin and end capture on the step's stream (the launches and
// the library call, in order, after the token the loop started from), then
// launched as a graph once per iteration; the graph is released after the
// loop (stream-ordered in the driver), before the host waits. As ga ops
// (CHECK) until --ga-lower-library-ops makes them the runtime's calls
// (CALLS).
// CHECK-LABEL: func.func @capture(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    %[[F:.*]] = gpu.launch_func async [%[[S]]] @k::@fill
// CHECK-NEXT:    %[[G:.*]], %[[E:.*]] = ga.graph_capture async [%[[F]]] {
// CHECK-NEXT:      %[[A:.*]] = gpu.launch_func async [%[[F]]] @k::@acc
// CHECK-NEXT:      %[[L:.*]] = ga.blas_matmul async [%[[A]]]
// CHECK-NEXT:      %[[B:.*]] = gpu.launch_func async [%[[L]]] @k::@acc
// CHECK-NEXT:      ga.graph_yield %[[B]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[D:.*]] = %[[E]]) -> (!gpu.async.token) {
// CHECK-NEXT:      %[[R:.*]] = ga.graph_launch async [%[[D]]] %[[G]]
// CHECK-NEXT:      scf.yield %[[R]] : !gpu.async.token
// CHECK-NEXT:    }
// CHECK-NEXT:    ga.graph_destroy %[[G]] : !llvm.ptr
// CHECK-NEXT:    ga.stream_synchronize %[[T]]
// CHECK-NOT:     mgpuGraph
// CALLS-LABEL: func.func @capture(
// CALLS:         %[[S:.*]] = gpu.wait async
// CALLS-NEXT:    %[[F:.*]] = gpu.launch_func async [%[[S]]] @k::@fill
// CALLS-NEXT:    call @mgpuGraphBeginCapture(%[[F]]) : (!gpu.async.token) -> ()
// CALLS-NEXT:    %[[A:.*]] = gpu.launch_func async [%[[F]]] @k::@acc
// CALLS:         call @gaCublasLtMatmul(%[[A]],
// CALLS-NEXT:    %[[B:.*]] = gpu.launch_func async [%[[A]]] @k::@acc
// CALLS-NEXT:    %[[G:.*]] = call @mgpuGraphEndCapture(%[[B]]) : (!gpu.async.token) -> !llvm.ptr
// CALLS-NEXT:    %[[T:.*]] = scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[D:.*]] = %[[B]]) -> (!gpu.async.token) {
// CALLS-NEXT:      func.call @mgpuGraphLaunch(%[[G]], %[[D]]) : (!llvm.ptr, !gpu.async.token) -> ()
// CALLS-NEXT:      scf.yield %[[D]] : !gpu.async.token
// CALLS-NEXT:    }
// CALLS-NEXT:    call @mgpuGraphDestroy(%[[G]]) : (!llvm.ptr) -> ()
// CALLS-NEXT:    call @mgpuStreamSynchronize(%[[T]])
// CALLS-NEXT:    call @mgpuStreamDestroy(%[[T]])
// CALLS-NEXT:    return
// CALLS-DAG:   func.func private @mgpuGraphBeginCapture(!gpu.async.token)
// CALLS-DAG:   func.func private @mgpuGraphEndCapture(!gpu.async.token) -> !llvm.ptr
// CALLS-DAG:   func.func private @mgpuGraphLaunch(!llvm.ptr, !gpu.async.token)
// CALLS-DAG:   func.func private @mgpuGraphDestroy(!llvm.ptr)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill(%m: memref<4xf32>) kernel { gpu.return }
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
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
    ga.stream_synchronize %t
    ga.stream_release %t
    return
  }
}

// -----

// A batch that the micro-batch count does not divide: the loop of the
// remainder micro-batch runs once and is launched directly (a graph replayed
// once would only add its capture and instantiation). Pure host ops of the
// captured body (a view of a device buffer) are computed once, at capture.
// CHECK-LABEL: func.func @remainder(
// CHECK:         %[[G1:.*]], %{{.*}} = ga.graph_capture
// CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK-NEXT:      ga.graph_launch async [%{{.*}}] %[[G1]]
// CHECK:         ga.graph_destroy %[[G1]]
// CHECK-NOT:     ga.graph
// CHECK:         return
// CALLS-LABEL: func.func @remainder(
// CALLS:         call @mgpuGraphBeginCapture
// CALLS-NEXT:    memref.subview
// CALLS-NEXT:    gpu.launch_func
// CALLS-NEXT:    %[[G1:.*]] = call @mgpuGraphEndCapture
// CALLS-NEXT:    scf.for %{{.*}} = %c0 to %c4 step %c1
// CALLS-NEXT:      func.call @mgpuGraphLaunch(%[[G1]]
// CALLS:         call @mgpuGraphDestroy(%[[G1]])
// CALLS-NOT:     mgpuGraph
// CALLS:         scf.for %{{.*}} = %c0 to %c1 step %c1
// CALLS-NEXT:      gpu.launch_func async {{.*}} @k::@acc
// CALLS-NOT:     mgpuGraph
// CALLS:         return
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
// CHECK:         ga.graph_capture
// CHECK:           scf.for %{{.*}} = %c0 to %c2
// CHECK:             ga.blas_matmul async
// CHECK:           ga.graph_yield
// CHECK:         scf.for %{{.*}} = %c0 to %c4
// CHECK-NEXT:      ga.graph_launch
// CALLS-LABEL: func.func @nested(
// CALLS:         call @mgpuGraphBeginCapture
// CALLS:         scf.for %{{.*}} = %c0 to %c2
// CALLS:           call @gaCublasLtMatmul
// CALLS:         call @mgpuGraphEndCapture
// CALLS:         scf.for %{{.*}} = %c0 to %c4
// CALLS-NEXT:      func.call @mgpuGraphLaunch
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
