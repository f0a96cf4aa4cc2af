// RUN: ga-opt %s --split-input-file --ga-overlap-all-reduce | FileCheck %s
// RUN: ga-opt %s --split-input-file --ga-overlap-all-reduce="comm-stream=0" | FileCheck %s --check-prefix=SAME

// Two buckets, accumulated in the micro-batch loop in the order of the
// backward (bucket 0 first), each all-reduced after the loop on the step's
// stream (the form after ga-gpu-single-stream). The last iteration is
// peeled; each call moves right after the last launch of that iteration that
// takes its bucket, on a communication stream made to wait for the step's
// stream there (`ga.stream_wait`); the step's stream waits for both
// all-reduces before the first launch that reads a bucket (@update), not
// before @other, and the launches after the join are ordered after it.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
    gpu.func @other(%a: memref<4xf32>) kernel { gpu.return }
  }

  // CHECK-LABEL: func.func @two_buckets(
  // CHECK-SAME:      %[[X:.*]]: memref<4xf32>)
  // CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
  // CHECK:         %[[B0:.*]], %{{.*}} = gpu.alloc async
  // CHECK:         %[[B1:.*]], %[[T1:.*]] = gpu.alloc async
  // CHECK:         %[[C3:.*]] = arith.constant 3 : index
  // CHECK:         %[[T:.*]] = scf.for %{{.*}} = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[D:.*]] = %[[T1]]) -> (!gpu.async.token) {
  // CHECK-NOT:       ga.nccl_all_reduce
  // CHECK-NOT:       ga.stream_wait
  // CHECK:           scf.yield
  // CHECK-NEXT:    }
  // CHECK-NEXT:    %{{.*}} = arith.constant 3 : index
  // CHECK-NEXT:    %[[A0:.*]] = gpu.launch_func async [%[[T]]] @k::@acc {{.*}} args(%[[B0]] : memref<8xf32>)
  // CHECK-NEXT:    %[[COMM:.*]] = gpu.wait async
  // CHECK-NEXT:    %[[F0:.*]] = ga.stream_wait async [%[[COMM]], %[[A0]]]
  // CHECK-NEXT:    %[[R0:.*]] = ga.nccl_all_reduce async [%[[F0]]] %[[B0]] {bucket = 0 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<8xf32>
  // CHECK-NEXT:    %[[O:.*]] = gpu.launch_func async [%[[A0]]] @k::@other {{.*}} args(%[[X]] : memref<4xf32>)
  // CHECK-NEXT:    %[[A1:.*]] = gpu.launch_func async [%[[O]]] @k::@acc {{.*}} args(%[[B1]] : memref<8xf32>)
  // CHECK-NEXT:    %[[F1:.*]] = ga.stream_wait async [%[[COMM]], %[[A1]]]
  // CHECK-NEXT:    %[[R1:.*]] = ga.nccl_all_reduce async [%[[F1]]] %[[B1]] {bucket = 1 : i64,
  // CHECK-NEXT:    %[[O2:.*]] = gpu.launch_func async [%[[A1]]] @k::@other {{.*}} args(%[[X]] : memref<4xf32>)
  // CHECK-NEXT:    %[[U:.*]] = gpu.launch_func async [%[[O2]]] @k::@other {{.*}} args(%[[X]] : memref<4xf32>)
  // CHECK-NEXT:    %[[J:.*]] = ga.stream_wait async [%[[U]], %[[R0]], %[[R1]]]
  // CHECK-NEXT:    ga.stream_release %[[COMM]]
  // CHECK-NEXT:    %[[V:.*]] = gpu.launch_func async [%[[J]]] @k::@acc {{.*}} args(%[[B1]] : memref<8xf32>)
  // CHECK-NEXT:    ga.stream_synchronize %[[V]]
  // CHECK-NOT:     ga.nccl_all_reduce
  // CHECK-NOT:     ga.stream_wait
  // CHECK:         return

  // On the step's stream: the same positions, no wait between streams, no
  // second stream.
  // SAME-LABEL: func.func @two_buckets(
  // SAME:         scf.for
  // SAME:           scf.yield
  // SAME:         %[[A0:.*]] = gpu.launch_func async {{.*}} @k::@acc
  // SAME-NOT:     ga.stream_wait
  // SAME:         ga.nccl_all_reduce async [%[[A0]]] %{{.*}} {bucket = 0 : i64
  // SAME:         gpu.launch_func async {{.*}} @k::@other
  // SAME:         %[[A1:.*]] = gpu.launch_func async {{.*}} @k::@acc
  // SAME-NOT:     ga.stream_wait
  // SAME:         ga.nccl_all_reduce async [%[[A1]]] %{{.*}} {bucket = 1 : i64
  // SAME-NOT:     gpu.wait
  // SAME-NOT:     ga.stream_wait
  // SAME:         return
  func.func @two_buckets(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
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
    %r0 = ga.nccl_all_reduce async [%t] %b0 {bucket = 0 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<8xf32>
    %r1 = ga.nccl_all_reduce async [%r0] %b1 {bucket = 1 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<8xf32>
    %u = gpu.launch_func async [%r1] @k::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %v = gpu.launch_func async [%u] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b1 : memref<8xf32>)
    ga.stream_synchronize %v
    ga.stream_release %v
    return
  }
}

// -----

// One micro-batch: the loop is its own last iteration and disappears. The
// buckets are views of one allocation, cloned where their all-reduces move.
// Views of one buffer may alias: both buckets
// wait for the last launch on the buffer, and bucket 1's call follows bucket
// 0's on the communication stream (bucket order, ordered after its token)
// without a second wait; the join waits for bucket 1's.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<4xf32, strided<[1], offset: ?>>) kernel { gpu.return }
  }

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
  // CHECK-NEXT:    %[[FORK:.*]] = ga.stream_wait async [%[[COMM]], %[[A0]]]
  // CHECK-NEXT:    %[[F0:.*]] = memref.subview %[[B]][0] [4] [1]
  // CHECK-NEXT:    %[[R0:.*]] = ga.nccl_all_reduce async [%[[FORK]]] %[[F0]] {bucket = 0 : i64
  // CHECK-NEXT:    %[[F1:.*]] = memref.subview %[[B]][4] [4] [1]
  // CHECK-NEXT:    %[[R1:.*]] = ga.nccl_all_reduce async [%[[R0]]] %[[F1]] {bucket = 1 : i64
  // CHECK-NEXT:    %[[J:.*]] = ga.stream_wait async [%[[A0]], %[[R1]]]
  // CHECK-NEXT:    ga.stream_release %[[COMM]]
  // CHECK-NEXT:    return %[[J]]
  func.func @one_micro_batch() -> !gpu.async.token {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
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
    %r0 = ga.nccl_all_reduce async [%t] %f0 {bucket = 0 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<4xf32, strided<[1]>>
    %f1 = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    %r1 = ga.nccl_all_reduce async [%r0] %f1 {bucket = 1 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<4xf32, strided<[1], offset: 4>>
    return %r1 : !gpu.async.token
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
// CHECK-NEXT:    %[[F:.*]] = ga.stream_wait async [%[[COMM]], %[[U]]]
// CHECK-NEXT:    %[[R:.*]] = ga.nccl_all_reduce async [%[[F]]]
// CHECK-NEXT:    %[[J:.*]] = ga.stream_wait async [%[[U]], %[[R]]]
// CHECK-NEXT:    ga.stream_release %[[COMM]]
// CHECK-NEXT:    return %[[J]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func @written_after_the_loop(%b: memref<8xf32>, %s: !gpu.async.token) -> !gpu.async.token {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    %u = gpu.launch_func async [%t] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    %r = ga.nccl_all_reduce async [%u] %b {datatype = 7 : i32, reduction = 4 : i32} : memref<8xf32>
    return %r : !gpu.async.token
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
// CHECK-NEXT:    %[[F0:.*]] = ga.stream_wait async [%[[COMM]], %[[A0]]]
// CHECK-NEXT:    %[[R1:.*]] = ga.nccl_all_reduce async [%[[F0]]] %[[B0]] {bucket = 1 : i64
// CHECK:         %[[A1:.*]] = gpu.launch_func async [%[[A0]]] @k::@acc
// CHECK-NEXT:    %[[F1:.*]] = ga.stream_wait async [%[[COMM]], %[[A1]]]
// CHECK-NEXT:    %[[R0:.*]] = ga.nccl_all_reduce async [%[[F1]]] %{{.*}} {bucket = 0 : i64
// CHECK-NEXT:    %[[J:.*]] = ga.stream_wait async [%[[A1]], %[[R0]], %[[R1]]]
// CHECK-NEXT:    ga.stream_release %[[COMM]]
// CHECK-NEXT:    return %[[J]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func @production_order(%s: !gpu.async.token) -> !gpu.async.token {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %b0, %t0 = gpu.alloc async [%s] () : memref<8xf32>
    %b1, %t1 = gpu.alloc async [%t0] () : memref<8xf32>
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %t1) -> (!gpu.async.token) {
      %a0 = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b0 : memref<8xf32>)
      %a1 = gpu.launch_func async [%a0] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b1 : memref<8xf32>)
      scf.yield %a1 : !gpu.async.token
    }
    %r1 = ga.nccl_all_reduce async [%t] %b1 {bucket = 0 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<8xf32>
    %r0 = ga.nccl_all_reduce async [%r1] %b0 {bucket = 1 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<8xf32>
    return %r0 : !gpu.async.token
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

  // CHECK-LABEL: func.func @count_then_bucket(
  // CHECK:         %[[N:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<1xi64>
  // CHECK:         %[[B:.*]], %{{.*}} = gpu.alloc async {{.*}} : memref<8xf32>
  // CHECK:         scf.for
  // CHECK:           scf.yield
  // CHECK:         %[[K:.*]] = gpu.launch_func async {{.*}} @k::@count {{.*}} args(%[[N]] : memref<1xi64>)
  // CHECK-NEXT:    %[[COMM0:.*]] = gpu.wait async
  // CHECK-NEXT:    %[[F0:.*]] = ga.stream_wait async [%[[COMM0]], %[[K]]]
  // CHECK-NEXT:    %[[RN:.*]] = ga.nccl_all_reduce async [%[[F0]]] %[[N]] {bucket = 0 : i64
  // CHECK-NEXT:    %[[J0:.*]] = ga.stream_wait async [%[[K]], %[[RN]]]
  // CHECK-NEXT:    ga.stream_release %[[COMM0]]
  // CHECK-NEXT:    %{{.*}} = arith.constant
  // CHECK-NEXT:    scf.for {{.*}} iter_args(%{{.*}} = %[[J0]])
  // CHECK:           gpu.launch_func async {{.*}} @k::@acc
  // CHECK:         %[[A:.*]] = gpu.launch_func async {{.*}} @k::@acc
  // CHECK-NEXT:    %[[COMM1:.*]] = gpu.wait async
  // CHECK-NEXT:    %[[F1:.*]] = ga.stream_wait async [%[[COMM1]], %[[A]]]
  // CHECK-NEXT:    %[[RB:.*]] = ga.nccl_all_reduce async [%[[F1]]] %[[B]] {bucket = 1 : i64
  // CHECK-NEXT:    %[[J1:.*]] = ga.stream_wait async [%[[A]], %[[RB]]]
  // CHECK-NEXT:    ga.stream_release %[[COMM1]]
  // CHECK-NEXT:    gpu.launch_func async [%[[J1]]] @k::@update
  func.func @count_then_bucket() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %n, %t0 = gpu.alloc async [%s] () : memref<1xi64>
    %b, %t1 = gpu.alloc async [%t0] () : memref<8xf32>
    %ts = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %t1) -> (!gpu.async.token) {
      %k = gpu.launch_func async [%d] @k::@count blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : memref<1xi64>)
      scf.yield %k : !gpu.async.token
    }
    %rn = ga.nccl_all_reduce async [%ts] %n {bucket = 0 : i64, datatype = 4 : i32, reduction = 0 : i32} : memref<1xi64>
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %rn) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : memref<1xi64>, %b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    %rb = ga.nccl_all_reduce async [%t] %b {bucket = 1 : i64, datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
    %u = gpu.launch_func async [%rb] @k::@update blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    ga.stream_synchronize %u
    ga.stream_release %u
    return
  }
}

// -----

// A sharded step (ZeRO-1): the gradient's reduce-scatter after the loop moves
// like an all-reduce, with the view of this rank's part cloned, onto the
// communication stream right after the last launch of the peeled iteration
// that writes the gradient; the update of this rank's part (@part) waits for
// the join. A reduce-scatter inside the loop (a bucket reduced per
// micro-batch) stays on the step's stream, where it is.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
    gpu.func @part(%a: memref<4xf32, strided<[1], offset: 4>>) kernel { gpu.return }
    gpu.func @other(%a: memref<4xf32>) kernel { gpu.return }
  }

  // CHECK-LABEL: func.func @reduce_scatter(
  // CHECK:         scf.for
  // CHECK-NOT:       ga.nccl_reduce_scatter
  // CHECK:           scf.yield
  // CHECK-NEXT:    }
  // CHECK:         %[[A:.*]] = gpu.launch_func async {{.*}} @k::@acc {{.*}} args(%[[B:.*]] : memref<8xf32>)
  // CHECK-NEXT:    %[[COMM:.*]] = gpu.wait async
  // CHECK-NEXT:    %[[F:.*]] = ga.stream_wait async [%[[COMM]], %[[A]]]
  // CHECK-NEXT:    %[[V:.*]] = memref.subview %[[B]][4] [4] [1]
  // CHECK-NEXT:    %[[R:.*]] = ga.nccl_reduce_scatter async [%[[F]]] %[[B]], %[[V]] {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64}
  // CHECK-NEXT:    %[[O:.*]] = gpu.launch_func async [%[[A]]] @k::@other
  // CHECK:         %[[J:.*]] = ga.stream_wait async [%[[O]], %[[R]]]
  // CHECK-NEXT:    ga.stream_release %[[COMM]]
  // CHECK-NEXT:    gpu.launch_func async [%[[J]]] @k::@part
  // CHECK-LABEL: func.func @reduce_scatter_in_loop(
  // CHECK:         scf.for
  // CHECK:           gpu.launch_func async {{.*}} @k::@acc
  // CHECK-NEXT:      ga.nccl_reduce_scatter async
  // CHECK-NOT:     ga.stream_wait
  // CHECK:         return
  func.func @reduce_scatter(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %b, %t0 = gpu.alloc async [%s] () : memref<8xf32>
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %t0) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      %o = gpu.launch_func async [%a] @k::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
      scf.yield %o : !gpu.async.token
    }
    %v = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    %r = ga.nccl_reduce_scatter async [%t] %b, %v {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32, strided<[1], offset: 4>>
    %u = gpu.launch_func async [%r] @k::@part blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%v : memref<4xf32, strided<[1], offset: 4>>)
    ga.stream_synchronize %u
    ga.stream_release %u
    return
  }
  func.func @reduce_scatter_in_loop(%b: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %v = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      %r = ga.nccl_reduce_scatter async [%a] %b, %v {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32, strided<[1], offset: 4>>
      scf.yield %r : !gpu.async.token
    }
    ga.stream_synchronize %t
    ga.stream_release %t
    return
  }
}
