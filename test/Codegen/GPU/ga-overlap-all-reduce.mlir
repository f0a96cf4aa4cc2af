// RUN: ga-opt %s --split-input-file --ga-overlap-all-reduce | FileCheck %s
// RUN: ga-opt %s --split-input-file --ga-overlap-all-reduce="comm-stream=0" | FileCheck %s --check-prefix=SAME

// Two buckets, accumulated in the micro-batch loop in the order of the
// backward (bucket 0 first), each all-reduced after the loop on the step's
// stream (the form after ga-gpu-single-stream). The last iteration is
// peeled; each call moves right after the last launch of that iteration that
// takes its bucket, on a communication stream that waits for an event of the
// step's stream there; the step's stream waits for the communication stream
// before the first launch that reads a bucket (@update), not before @other.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
    gpu.func @other(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  func.func private @mgpuStreamSynchronize(!gpu.async.token)
  func.func private @mgpuStreamDestroy(!gpu.async.token)

  // CHECK-LABEL: func.func @two_buckets(
  // CHECK-SAME:      %[[X:.*]]: memref<4xf32>)
  // CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
  // CHECK:         %[[B0:.*]], %{{.*}} = gpu.alloc async
  // CHECK:         %[[B1:.*]], %[[T1:.*]] = gpu.alloc async
  // CHECK:         %[[C3:.*]] = arith.constant 3 : index
  // CHECK:         %[[T:.*]] = scf.for %{{.*}} = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[D:.*]] = %[[T1]]) -> (!gpu.async.token) {
  // CHECK-NOT:       gaNcclAllReduce
  // CHECK-NOT:       mgpuEvent
  // CHECK:           scf.yield
  // CHECK-NEXT:    }
  // CHECK-NEXT:    %{{.*}} = arith.constant 3 : index
  // CHECK-NEXT:    %[[A0:.*]] = gpu.launch_func async [%[[T]]] @k::@acc {{.*}} args(%[[B0]] : memref<8xf32>)
  // CHECK-NEXT:    %[[COMM:.*]] = gpu.wait async
  // CHECK-NEXT:    %[[E0:.*]] = call @mgpuEventCreate() : () -> !llvm.ptr
  // CHECK-NEXT:    call @mgpuEventRecord(%[[E0]], %[[A0]]) : (!llvm.ptr, !gpu.async.token) -> ()
  // CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[COMM]], %[[E0]]) : (!gpu.async.token, !llvm.ptr) -> ()
  // CHECK-NEXT:    call @mgpuEventDestroy(%[[E0]]) : (!llvm.ptr) -> ()
  // CHECK-NEXT:    %[[I0:.*]] = memref.extract_aligned_pointer_as_index %[[B0]]
  // CHECK-NEXT:    %[[L0:.*]] = arith.index_cast %[[I0]] : index to i64
  // CHECK-NEXT:    %[[P0:.*]] = llvm.inttoptr %[[L0]] : i64 to !llvm.ptr
  // CHECK-NEXT:    %[[R0:.*]] = call @gaNcclAllReduce(%[[COMM]], %[[P0]], %{{.*}}) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  // CHECK-NEXT:    %[[OK0:.*]] = arith.cmpi eq, %[[R0]], %{{.*}} : i32
  // CHECK-NEXT:    cf.assert %[[OK0]], "bucket 0"
  // CHECK-NEXT:    %[[O:.*]] = gpu.launch_func async [%[[A0]]] @k::@other {{.*}} args(%[[X]] : memref<4xf32>)
  // CHECK-NEXT:    %[[A1:.*]] = gpu.launch_func async [%[[O]]] @k::@acc {{.*}} args(%[[B1]] : memref<8xf32>)
  // CHECK-NEXT:    %[[E1:.*]] = call @mgpuEventCreate()
  // CHECK-NEXT:    call @mgpuEventRecord(%[[E1]], %[[A1]])
  // CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[COMM]], %[[E1]])
  // CHECK-NEXT:    call @mgpuEventDestroy(%[[E1]])
  // CHECK-NEXT:    %[[I1:.*]] = memref.extract_aligned_pointer_as_index %[[B1]]
  // CHECK-NEXT:    %[[L1:.*]] = arith.index_cast %[[I1]] : index to i64
  // CHECK-NEXT:    %[[P1:.*]] = llvm.inttoptr %[[L1]] : i64 to !llvm.ptr
  // CHECK-NEXT:    %[[R1:.*]] = call @gaNcclAllReduce(%[[COMM]], %[[P1]], %{{.*}})
  // CHECK-NEXT:    %[[OK1:.*]] = arith.cmpi eq, %[[R1]], %{{.*}} : i32
  // CHECK-NEXT:    cf.assert %[[OK1]], "bucket 1"
  // CHECK-NEXT:    %[[O2:.*]] = gpu.launch_func async [%[[A1]]] @k::@other {{.*}} args(%[[X]] : memref<4xf32>)
  // CHECK-NEXT:    %[[U:.*]] = gpu.launch_func async [%[[O2]]] @k::@other {{.*}} args(%[[X]] : memref<4xf32>)
  // CHECK-NEXT:    %[[E2:.*]] = call @mgpuEventCreate()
  // CHECK-NEXT:    call @mgpuEventRecord(%[[E2]], %[[COMM]])
  // CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[U]], %[[E2]])
  // CHECK-NEXT:    call @mgpuEventDestroy(%[[E2]])
  // CHECK-NEXT:    call @mgpuStreamDestroy(%[[COMM]])
  // CHECK-NEXT:    %[[V:.*]] = gpu.launch_func async [%[[U]]] @k::@acc {{.*}} args(%[[B1]] : memref<8xf32>)
  // CHECK-NEXT:    call @mgpuStreamSynchronize(%[[V]])
  // CHECK-NOT:     gaNcclAllReduce
  // CHECK-NOT:     mgpuStreamWaitEvent
  // CHECK:         return
  // CHECK-DAG:   func.func private @mgpuEventCreate() -> !llvm.ptr
  // CHECK-DAG:   func.func private @mgpuEventRecord(!llvm.ptr, !gpu.async.token)
  // CHECK-DAG:   func.func private @mgpuStreamWaitEvent(!gpu.async.token, !llvm.ptr)
  // CHECK-DAG:   func.func private @mgpuEventDestroy(!llvm.ptr)

  // On the step's stream: the same positions, no event, no second stream.
  // SAME-LABEL: func.func @two_buckets(
  // SAME:         scf.for
  // SAME:           scf.yield
  // SAME:         %[[A0:.*]] = gpu.launch_func async {{.*}} @k::@acc
  // SAME-NOT:     mgpuEvent
  // SAME:         call @gaNcclAllReduce(%[[A0]],
  // SAME:         cf.assert %{{.*}}, "bucket 0"
  // SAME:         gpu.launch_func async {{.*}} @k::@other
  // SAME:         %[[A1:.*]] = gpu.launch_func async {{.*}} @k::@acc
  // SAME-NOT:     mgpuEvent
  // SAME:         call @gaNcclAllReduce(%[[A1]],
  // SAME:         cf.assert %{{.*}}, "bucket 1"
  // SAME-NOT:     gpu.wait
  // SAME-NOT:     mgpuEvent
  // SAME:         return
  func.func @two_buckets(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c7_i32 = arith.constant 7 : i32
    %c8_i64 = arith.constant 8 : i64
    %s = gpu.wait async
    %b0, %t0 = gpu.alloc async [%s] () : memref<8xf32>
    %b1, %t1 = gpu.alloc async [%t0] () : memref<8xf32>
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %t1) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b0 : memref<8xf32>)
      %o = gpu.launch_func async [%a] @k::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
      %c = gpu.launch_func async [%o] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b1 : memref<8xf32>)
      %o2 = gpu.launch_func async [%c] @k::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
      scf.yield %o2 : !gpu.async.token
    }
    %i0 = memref.extract_aligned_pointer_as_index %b0 : memref<8xf32> -> index
    %l0 = arith.index_cast %i0 : index to i64
    %p0 = llvm.inttoptr %l0 : i64 to !llvm.ptr
    %r0 = func.call @gaNcclAllReduce(%t, %p0, %c8_i64, %c7_i32, %c4_i32) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %ok0 = arith.cmpi eq, %r0, %c0_i32 : i32
    cf.assert %ok0, "bucket 0"
    %i1 = memref.extract_aligned_pointer_as_index %b1 : memref<8xf32> -> index
    %l1 = arith.index_cast %i1 : index to i64
    %p1 = llvm.inttoptr %l1 : i64 to !llvm.ptr
    %r1 = func.call @gaNcclAllReduce(%t, %p1, %c8_i64, %c7_i32, %c4_i32) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %ok1 = arith.cmpi eq, %r1, %c0_i32 : i32
    cf.assert %ok1, "bucket 1"
    %u = gpu.launch_func async [%t] @k::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %v = gpu.launch_func async [%u] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b1 : memref<8xf32>)
    func.call @mgpuStreamSynchronize(%v) : (!gpu.async.token) -> ()
    func.call @mgpuStreamDestroy(%v) : (!gpu.async.token) -> ()
    return
  }
}

// -----

// One micro-batch: the loop is its own last iteration and disappears. The
// buckets are views of one allocation, addressed as base + offset (what
// --convert-ga-to-nccl emits). Views of one buffer may alias: both buckets
// wait for the last launch on the buffer, and bucket 1's call follows bucket
// 0's on the communication stream (bucket order) without a second event.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<4xf32, strided<[1], offset: ?>>) kernel { gpu.return }
  }
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32

  // CHECK-LABEL: func.func @one_micro_batch(
  // CHECK-NOT:     scf.for
  // CHECK:         %[[B:.*]], %[[T:.*]] = gpu.alloc async
  // CHECK:         %[[V1:.*]] = memref.subview %[[B]][4] [4] [1]
  // CHECK:         %[[W1:.*]] = memref.cast %[[V1]]
  // CHECK:         %[[A1:.*]] = gpu.launch_func async [%[[T]]] @k::@acc {{.*}} args(%[[W1]]
  // CHECK:         %[[V0:.*]] = memref.subview %[[B]][0] [4] [1]
  // CHECK:         %[[W0:.*]] = memref.cast %[[V0]]
  // CHECK:         %[[A0:.*]] = gpu.launch_func async [%[[A1]]] @k::@acc {{.*}} args(%[[W0]]
  // CHECK-NEXT:    %[[COMM:.*]] = gpu.wait async
  // CHECK:         call @mgpuEventRecord(%{{.*}}, %[[A0]])
  // CHECK:         call @gaNcclAllReduce(%[[COMM]], {{.*}}) {bucket = 0 : i64}
  // CHECK:         cf.assert
  // CHECK-NOT:     mgpuEvent
  // CHECK:         call @gaNcclAllReduce(%[[COMM]], {{.*}}) {bucket = 1 : i64}
  // CHECK:         cf.assert
  // CHECK:         call @mgpuEventRecord(%{{.*}}, %[[COMM]])
  // CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[A0]], %{{.*}})
  // CHECK-NEXT:    call @mgpuEventDestroy
  // CHECK-NEXT:    call @mgpuStreamDestroy(%[[COMM]])
  // CHECK-NEXT:    return %[[A0]]
  func.func @one_micro_batch() -> !gpu.async.token {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c7_i32 = arith.constant 7 : i32
    %c4_i64 = arith.constant 4 : i64
    %s = gpu.wait async
    %b, %t0 = gpu.alloc async [%s] () : memref<8xf32>
    %t = scf.for %i = %c0 to %c1 step %c1 iter_args(%d = %t0) -> (!gpu.async.token) {
      %v1 = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
      %c1v = memref.cast %v1 : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32, strided<[1], offset: ?>>
      %a1 = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c1v : memref<4xf32, strided<[1], offset: ?>>)
      %v0 = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
      %c0v = memref.cast %v0 : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: ?>>
      %a0 = gpu.launch_func async [%a1] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c0v : memref<4xf32, strided<[1], offset: ?>>)
      scf.yield %a0 : !gpu.async.token
    }
    %f0 = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
    %base0 = memref.extract_aligned_pointer_as_index %f0 : memref<4xf32, strided<[1]>> -> index
    %i0 = arith.index_cast %base0 : index to i64
    %p0 = llvm.inttoptr %i0 : i64 to !llvm.ptr
    %r0 = func.call @gaNcclAllReduce(%t, %p0, %c4_i64, %c7_i32, %c4_i32) {bucket = 0 : i64} : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %ok0 = arith.cmpi eq, %r0, %c0_i32 : i32
    cf.assert %ok0, "bucket 0"
    %f1 = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    %base1 = memref.extract_aligned_pointer_as_index %f1 : memref<4xf32, strided<[1], offset: 4>> -> index
    %_, %off, %sz, %st = memref.extract_strided_metadata %f1 : memref<4xf32, strided<[1], offset: 4>> -> memref<f32>, index, index, index
    %bytes = arith.muli %off, %c4 : index
    %addr = arith.addi %base1, %bytes : index
    %i1 = arith.index_cast %addr : index to i64
    %p1 = llvm.inttoptr %i1 : i64 to !llvm.ptr
    %r1 = func.call @gaNcclAllReduce(%t, %p1, %c4_i64, %c7_i32, %c4_i32) {bucket = 1 : i64} : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %ok1 = arith.cmpi eq, %r1, %c0_i32 : i32
    cf.assert %ok1, "bucket 1"
    return %t : !gpu.async.token
  }
}

// -----

// Without an all-reduce, nothing changes: the loop is not peeled.
// CHECK-LABEL: func.func @no_all_reduce(
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[C4]] step
// CHECK-NEXT:      gpu.launch_func
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func @no_all_reduce(%b: memref<8xf32>, %s: !gpu.async.token) -> !gpu.async.token {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    return %t : !gpu.async.token
  }
}

// -----

// A bucket last written after the loop (a remainder micro-batch, as straight
// code): its all-reduce follows that launch; the loop is not peeled.
// CHECK-LABEL: func.func @written_after_the_loop(
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         %[[T:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C4]] step
// CHECK:         }
// CHECK-NEXT:    %[[U:.*]] = gpu.launch_func async [%[[T]]] @k::@acc
// CHECK-NEXT:    %[[COMM:.*]] = gpu.wait async
// CHECK-NEXT:    %[[E:.*]] = call @mgpuEventCreate()
// CHECK-NEXT:    call @mgpuEventRecord(%[[E]], %[[U]])
// CHECK:         call @gaNcclAllReduce(%[[COMM]],
// CHECK:         call @mgpuStreamWaitEvent(%[[U]],
// CHECK-NEXT:    call @mgpuEventDestroy
// CHECK-NEXT:    call @mgpuStreamDestroy(%[[COMM]])
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  func.func @written_after_the_loop(%b: memref<8xf32>, %s: !gpu.async.token) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    %u = gpu.launch_func async [%t] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    %i = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
    %l = arith.index_cast %i : index to i64
    %p = llvm.inttoptr %l : i64 to !llvm.ptr
    %r = func.call @gaNcclAllReduce(%u, %p, %n, %c, %c) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    return %r : i32
  }
}

// -----

// All-reduces in another order than the backward completes their buffers
// (single gradients in parameter order, without --ga-bucket-gradients): each
// still follows its own last producer, so the second call is issued first;
// the communication stream is created before its first fork.
// CHECK-LABEL: func.func @production_order(
// CHECK:         scf.for
// CHECK:         }
// CHECK:         %[[A0:.*]] = gpu.launch_func async {{.*}} @k::@acc {{.*}} args(%[[B0:.*]] : memref<8xf32>)
// CHECK-NEXT:    %[[COMM:.*]] = gpu.wait async
// CHECK-NEXT:    %[[E0:.*]] = call @mgpuEventCreate()
// CHECK-NEXT:    call @mgpuEventRecord(%[[E0]], %[[A0]])
// CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[COMM]], %[[E0]])
// CHECK-NEXT:    call @mgpuEventDestroy(%[[E0]])
// CHECK-NEXT:    memref.extract_aligned_pointer_as_index %[[B0]]
// CHECK:         call @gaNcclAllReduce(%[[COMM]], {{.*}}) {bucket = 1 : i64}
// CHECK:         %[[A1:.*]] = gpu.launch_func async [%[[A0]]] @k::@acc
// CHECK-NEXT:    %[[E1:.*]] = call @mgpuEventCreate()
// CHECK-NEXT:    call @mgpuEventRecord(%[[E1]], %[[A1]])
// CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[COMM]], %[[E1]])
// CHECK:         call @gaNcclAllReduce(%[[COMM]], {{.*}}) {bucket = 0 : i64}
// CHECK:         call @mgpuStreamWaitEvent(%[[A1]],
// CHECK:         call @mgpuStreamDestroy(%[[COMM]])
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  func.func @production_order(%s: !gpu.async.token) -> !gpu.async.token {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    %b0, %t0 = gpu.alloc async [%s] () : memref<8xf32>
    %b1, %t1 = gpu.alloc async [%t0] () : memref<8xf32>
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %t1) -> (!gpu.async.token) {
      %a0 = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b0 : memref<8xf32>)
      %a1 = gpu.launch_func async [%a0] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b1 : memref<8xf32>)
      scf.yield %a1 : !gpu.async.token
    }
    %i1 = memref.extract_aligned_pointer_as_index %b1 : memref<8xf32> -> index
    %l1 = arith.index_cast %i1 : index to i64
    %p1 = llvm.inttoptr %l1 : i64 to !llvm.ptr
    %r1 = func.call @gaNcclAllReduce(%t, %p1, %n, %c, %c) {bucket = 0 : i64} : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %i0 = memref.extract_aligned_pointer_as_index %b0 : memref<8xf32> -> index
    %l0 = arith.index_cast %i0 : index to i64
    %p0 = llvm.inttoptr %l0 : i64 to !llvm.ptr
    %r0 = func.call @gaNcclAllReduce(%t, %p0, %n, %c, %c) {bucket = 1 : i64} : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    return %t : !gpu.async.token
  }
}

// -----

// A statistics loop's count, all-reduced after it and read by the
// micro-batch loop (a global token count), then the gradient bucket of the
// micro-batch loop: two runs of all-reduces, each on its own communication
// stream. The count's stream joins the step's stream before the
// micro-batch loop, which reads the count; the bucket's before the update.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @count(%a: memref<1xi64>) kernel { gpu.return }
    gpu.func @acc(%n: memref<1xi64>, %a: memref<8xf32>) kernel { gpu.return }
    gpu.func @update(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  func.func private @mgpuStreamSynchronize(!gpu.async.token)
  func.func private @mgpuStreamDestroy(!gpu.async.token)

  // CHECK-LABEL: func.func @count_then_bucket(
  // CHECK:         %[[N:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<1xi64>
  // CHECK:         %[[B:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<8xf32>
  // CHECK:         scf.for
  // CHECK:           scf.yield
  // CHECK:         %[[K:.*]] = gpu.launch_func async {{.*}} @k::@count {{.*}} args(%[[N]] : memref<1xi64>)
  // CHECK-NEXT:    %[[COMM0:.*]] = gpu.wait async
  // CHECK:         call @gaNcclAllReduce(%[[COMM0]],
  // CHECK:         cf.assert %{{.*}}, "count"
  // CHECK-NEXT:    %[[E0:.*]] = call @mgpuEventCreate()
  // CHECK-NEXT:    call @mgpuEventRecord(%[[E0]], %[[COMM0]])
  // CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[K]], %[[E0]])
  // CHECK-NEXT:    call @mgpuEventDestroy(%[[E0]])
  // CHECK-NEXT:    call @mgpuStreamDestroy(%[[COMM0]])
  // CHECK-NEXT:    %{{.*}} = arith.constant
  // CHECK-NEXT:    scf.for
  // CHECK:           gpu.launch_func async {{.*}} @k::@acc
  // CHECK:         %[[A:.*]] = gpu.launch_func async {{.*}} @k::@acc
  // CHECK-NEXT:    %[[COMM1:.*]] = gpu.wait async
  // CHECK:         call @gaNcclAllReduce(%[[COMM1]],
  // CHECK:         cf.assert %{{.*}}, "bucket"
  // CHECK-NEXT:    %[[E1:.*]] = call @mgpuEventCreate()
  // CHECK-NEXT:    call @mgpuEventRecord(%[[E1]], %[[COMM1]])
  // CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[A]], %[[E1]])
  // CHECK-NEXT:    call @mgpuEventDestroy(%[[E1]])
  // CHECK-NEXT:    call @mgpuStreamDestroy(%[[COMM1]])
  // CHECK-NEXT:    gpu.launch_func async [%[[A]]] @k::@update
  func.func @count_then_bucket() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c7_i32 = arith.constant 7 : i32
    %c1_i64 = arith.constant 1 : i64
    %c8_i64 = arith.constant 8 : i64
    %s = gpu.wait async
    %n, %t0 = gpu.alloc async [%s] () : memref<1xi64>
    %b, %t1 = gpu.alloc async [%t0] () : memref<8xf32>
    %ts = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %t1) -> (!gpu.async.token) {
      %k = gpu.launch_func async [%d] @k::@count blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : memref<1xi64>)
      scf.yield %k : !gpu.async.token
    }
    %in = memref.extract_aligned_pointer_as_index %n : memref<1xi64> -> index
    %ln = arith.index_cast %in : index to i64
    %pn = llvm.inttoptr %ln : i64 to !llvm.ptr
    %rn = func.call @gaNcclAllReduce(%ts, %pn, %c1_i64, %c4_i32, %c0_i32) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %okn = arith.cmpi eq, %rn, %c0_i32 : i32
    cf.assert %okn, "count"
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %ts) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : memref<1xi64>, %b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    %ib = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
    %lb = arith.index_cast %ib : index to i64
    %pb = llvm.inttoptr %lb : i64 to !llvm.ptr
    %rb = func.call @gaNcclAllReduce(%t, %pb, %c8_i64, %c7_i32, %c0_i32) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    %okb = arith.cmpi eq, %rb, %c0_i32 : i32
    cf.assert %okb, "bucket"
    %u = gpu.launch_func async [%t] @k::@update blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    func.call @mgpuStreamSynchronize(%u) : (!gpu.async.token) -> ()
    func.call @mgpuStreamDestroy(%u) : (!gpu.async.token) -> ()
    return
  }
}
