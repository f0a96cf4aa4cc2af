// RUN: ga-opt %s -split-input-file -ga-gpu-single-stream | FileCheck %s

// A micro-batch loop of launches: one stream for the function, its token
// carried through the loop, one host wait before the return.
// CHECK-LABEL: func.func @loop(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    %[[M:.*]], %[[A:.*]] = gpu.alloc async [%[[S]]] () : memref<4xf32>
// CHECK-NEXT:    %[[F:.*]] = gpu.launch_func async [%[[A]]] @k::@fill
// CHECK-NEXT:    %[[T:.*]] = scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[D:.*]] = %[[F]]) -> (!gpu.async.token) {
// CHECK-NEXT:      %[[L1:.*]] = gpu.launch_func async [%[[D]]] @k::@acc
// CHECK-NEXT:      %[[L2:.*]] = gpu.launch_func async [%[[L1]]] @k::@acc
// CHECK-NEXT:      scf.yield %[[L2]] : !gpu.async.token
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[FREE:.*]] = gpu.dealloc async [%[[T]]] %[[M]] : memref<4xf32>
// CHECK-NEXT:    ga.stream_synchronize %[[FREE]]
// CHECK-NEXT:    ga.stream_release %[[FREE]]
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @fill(%m: memref<4xf32>) kernel { gpu.return }
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
  func.func @loop() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %m = gpu.alloc () : memref<4xf32>
    gpu.launch_func @k::@fill blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
      gpu.launch_func @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    }
    gpu.dealloc %m : memref<4xf32>
    return
  }
}

// -----

// A read-back inside the loop (host control flow on a device value): the
// host waits before it reads the host buffer, and the next launches start a
// new stream, which the loop carries. scf.if continues the chain in both
// branches. A host helper without GPU work (deallocation's) is called
// without waiting.
// CHECK-LABEL: func.func @read_back(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK:         scf.for {{.*}} iter_args(%[[D:.*]] = %[[S]]) -> (!gpu.async.token) {
// CHECK-NEXT:      %[[L:.*]] = gpu.launch_func async [%[[D]]] @k::@acc
// CHECK-NEXT:      %[[C:.*]] = gpu.memcpy async [%[[L]]] %[[H:.*]], %{{.*}} : memref<f32>, memref<f32>
// CHECK-NEXT:      ga.stream_synchronize %[[C]]
// CHECK-NEXT:      ga.stream_release %[[C]]
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[H]][]
// CHECK-NEXT:      %[[P:.*]] = arith.cmpf ogt, %[[V]]
// CHECK-NEXT:      call @helper()
// CHECK-NEXT:      %[[N:.*]] = gpu.wait async
// CHECK-NEXT:      %[[I:.*]] = scf.if %[[P]] -> (!gpu.async.token) {
// CHECK-NEXT:        %[[K:.*]] = gpu.launch_func async [%[[N]]] @k::@clip
// CHECK-NEXT:        scf.yield %[[K]] : !gpu.async.token
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[N]] : !gpu.async.token
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[I]] : !gpu.async.token
// CHECK:         ga.stream_synchronize
// CHECK-NEXT:    ga.stream_release
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
    gpu.func @clip(%m: memref<f32>) kernel { gpu.return }
  }
  func.func private @helper() {
    return
  }
  func.func @read_back(%m: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %h = memref.alloca() : memref<f32>
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      gpu.memcpy %h, %m : memref<f32>, memref<f32>
      %v = memref.load %h[] : memref<f32>
      %p = arith.cmpf ogt, %v, %zero : f32
      func.call @helper() : () -> ()
      scf.if %p {
        gpu.launch_func @k::@clip blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      }
    }
    return
  }
}

// -----

// Without GPU work, nothing changes.
// CHECK-LABEL: func.func @host_only(
// CHECK-NEXT:    return
// CHECK-NOT:   ga.stream_synchronize
module {
  func.func @host_only() {
    return
  }
}

// -----

// An NCCL all-reduce (synchronous: the form --convert-ga-to-nccl emits) is
// ordered on the step's stream like a launch: no host wait before or after
// it; one wait, before the return.
// CHECK-LABEL: func.func @nccl(
// CHECK:         %[[T:.*]] = scf.for
// CHECK-NOT:     ga.stream_synchronize
// CHECK:         %[[R:.*]] = ga.nccl_all_reduce async [%[[T]]] %{{.*}} {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
// CHECK-NEXT:    %[[U:.*]] = gpu.launch_func async [%[[R]]] @k::@update
// CHECK-NEXT:    ga.stream_synchronize %[[U]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
    gpu.func @update(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func @nccl(%b: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    }
    ga.nccl_all_reduce %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
    gpu.launch_func @k::@update blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    return
  }
}
