// RUN: ga-opt %s -split-input-file -ga-lower-library-ops -canonicalize | FileCheck %s

// A weight gradient accumulated in place (dW += X^T dY): beta = 1, A
// transposed (X stored [k][m]), leading dimensions from the layouts, no
// bias (a null pointer), a null stream (no async dependency: the loop stage
// run on the CPU).
// CHECK-LABEL: func.func private @gaCublasLtMatmul(!llvm.ptr, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr)
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @gaCublasLtMatmul(%[[NULL]], %[[T]], %[[F32]], %c16_i64, %c32_i64, %c6_i64, %{{.*}}, %c16_i64, %{{.*}}, %c32_i64, %{{.*}}, %c32_i64, %[[F32]], %[[F32]], %[[ONE]], %[[ONE]], %[[NULL]]) {ga.accumulates}
// CHECK-NOT:     ga.blas_matmul
func.func @weight_gradient(%x: memref<6x16xf32>, %dy: memref<6x32xf32>, %acc: memref<16x32xf32>) {
  ga.blas_matmul %x, %dy, %acc {accumulate, transpose_lhs, ga.accumulates} : memref<6x16xf32>, memref<6x32xf32>, memref<16x32xf32>
  return
}

// -----

// On the step's stream: the token is the call's stream, and what followed
// the op's token follows it. bf16 inputs (14), beta = 0, a bias pointer,
// and a view with a row stride of 32 (its leading dimension).
// CHECK-LABEL: func.func private @gaCublasLtMatmul(!gpu.async.token, i32
// CHECK-LABEL: func.func @on_stream(
// CHECK-SAME:      %[[B:[^:]+]]: memref<4xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[BF16:.*]] = arith.constant 14 : i32
// CHECK:         %[[T0:.*]] = gpu.wait async
// CHECK:         %[[IPB:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-NEXT:    %[[IB:.*]] = arith.index_cast %[[IPB]]
// CHECK-NEXT:    %[[PB:.*]] = llvm.inttoptr %[[IB]]
// CHECK-NEXT:    call @gaCublasLtMatmul(%[[T0]], %c0_i32, %c0_i32, %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %{{.*}}, %c4_i64, %{{.*}}, %c32_i64, %[[BF16]], %c0_i32, %[[ONE]], %[[ZERO]], %[[PB]])
// CHECK-NOT:     ga.blas_matmul
func.func @on_stream(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x32xf32>, %bias: memref<4xf32>) {
  %t0 = gpu.wait async
  %y = memref.subview %c[0, 0] [8, 4] [1, 1] : memref<8x32xf32> to memref<8x4xf32, strided<[32, 1]>>
  %t1 = ga.blas_matmul async [%t0] %a, %b, %y bias(%bias : memref<4xf32>) : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xf32, strided<[32, 1]>>
  gpu.wait [%t1]
  return
}

// -----

// Attention's scores per batch (K stored [b][n][k]: B transposed): the
// strided-batched entry point, each operand with its batch stride
// (elements), batch count 4, beta = 0.
// CHECK-LABEL: func.func private @gaCublasLtMatmulStridedBatched(!llvm.ptr, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i32, i32, f32, f32)
// CHECK-LABEL: func.func @attention_scores(
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         call @gaCublasLtMatmulStridedBatched(%{{.*}}, %c0_i32, %c1_i32, %c6_i64, %c6_i64, %c8_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c8_i64, %c48_i64, %{{.*}}, %c6_i64, %c36_i64, %c4_i64, %c0_i32, %c0_i32, %[[ONE]], %[[ZERO]])
func.func @attention_scores(%q: memref<4x6x8xf32>, %k: memref<4x6x8xf32>, %s: memref<4x6x6xf32>) {
  ga.blas_matmul %q, %k, %s {transpose_rhs} : memref<4x6x8xf32>, memref<4x6x8xf32>, memref<4x6x6xf32>
  return
}

// -----

// A matrix-vector product as a GEMM with N = 1 (leading dimension 1).
// CHECK-LABEL: func.func @matvec(
// CHECK:         call @gaCublasLtMatmul(%{{.*}}, %c0_i32, %c0_i32, %c6_i64, %c1_i64, %c16_i64, %{{.*}}, %c16_i64, %{{.*}}, %c1_i64, %{{.*}}, %c1_i64,
func.func @matvec(%a: memref<6x16xf32>, %x: memref<16x1xf32>, %y: memref<6x1xf32>) {
  ga.blas_matmul %a, %x, %y : memref<6x16xf32>, memref<16x1xf32>, memref<6x1xf32>
  return
}

// -----

// An NCCL all-reduce without a stream (the runtime waits for the device):
// the address of the buffer's first element (a view at offset 4), its
// element count, NCCL's codes, and a failure that aborts.
// CHECK-LABEL: func.func private @gaNcclAllReduce(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:      %[[B:[^:]+]]: memref<8xf32>
// CHECK-DAG:     %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG:     %[[N:.*]] = arith.constant 4 : i64
// CHECK-DAG:     %[[F32:.*]] = arith.constant 7 : i32
// CHECK-DAG:     %[[AVG:.*]] = arith.constant 4 : i32
// CHECK-DAG:     %[[V:.*]] = memref.subview %[[B]][4] [4] [1]
// CHECK:         %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[V]]
// CHECK:         %[[ADDR:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK:         %[[A64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:         %[[PTR:.*]] = llvm.inttoptr %[[A64]] : i64 to !llvm.ptr
// CHECK:         %[[RC:.*]] = call @gaNcclAllReduce(%[[NULL]], %[[PTR]], %[[N]], %[[F32]], %[[AVG]]) {bucket = 3 : i64}
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[RC]], %{{.*}} : i32
// CHECK:         cf.assert %[[OK]], "ga: gaNcclAllReduce failed
// CHECK-NOT:     ga.nccl_all_reduce
func.func @all_reduce(%b: memref<8xf32>) {
  %v = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  ga.nccl_all_reduce %v {bucket = 3 : i64, datatype = 7 : i32, reduction = 4 : i32} : memref<4xf32, strided<[1], offset: 4>>
  return
}

// -----

// On the step's stream, with a dynamic size: the count is the buffer's
// dimension; what followed the op's token follows the stream.
// CHECK-LABEL: func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
// CHECK-LABEL: func.func @all_reduce_on_stream(
// CHECK-SAME:      %[[B:[^:]+]]: memref<?xbf16>
// CHECK:         %[[T:.*]] = gpu.wait async
// CHECK:         %[[D:.*]] = memref.dim %[[B]], %{{.*}} : memref<?xbf16>
// CHECK:         %[[N:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK:         call @gaNcclAllReduce(%[[T]], %{{.*}}, %[[N]], %{{.*}}, %{{.*}}) {bucket = 0 : i64}
// CHECK:         cf.assert
// CHECK:         call @gaNcclAllReduce(%[[T]], {{.*}}) {bucket = 1 : i64}
func.func @all_reduce_on_stream(%b: memref<?xbf16>) {
  %t0 = gpu.wait async
  %t1 = ga.nccl_all_reduce async [%t0] %b {bucket = 0 : i64, datatype = 9 : i32, reduction = 0 : i32} : memref<?xbf16>
  %t2 = ga.nccl_all_reduce async [%t1] %b {bucket = 1 : i64, datatype = 9 : i32, reduction = 0 : i32} : memref<?xbf16>
  return
}

// -----

// The sharded collectives on the step's stream: the addresses of the whole
// buffer and of this rank's part (a view at offset 6), the element count of
// one part, NCCL's codes (no reduction for the gather), failures that abort;
// what followed the tokens follows the stream.
// CHECK-LABEL: func.func private @gaNcclAllGather(!gpu.async.token, !llvm.ptr, !llvm.ptr, i64, i32) -> i32
// CHECK-LABEL: func.func private @gaNcclReduceScatter(!gpu.async.token, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
// CHECK-LABEL: func.func @sharded(
// CHECK-SAME:      %[[B:[^:]+]]: memref<12xf32>
// CHECK-DAG:     %[[N:.*]] = arith.constant 6 : i64
// CHECK-DAG:     %[[F32:.*]] = arith.constant 7 : i32
// CHECK-DAG:     %[[SUM:.*]] = arith.constant 0 : i32
// CHECK:         %[[T:.*]] = gpu.wait async
// CHECK:         %[[V:.*]] = memref.subview %[[B]][6] [6] [1]
// CHECK:         %[[WHOLE:.*]] = llvm.inttoptr {{.*}} : i64 to !llvm.ptr
// CHECK:         %[[PART:.*]] = llvm.inttoptr {{.*}} : i64 to !llvm.ptr
// CHECK:         %[[RC:.*]] = call @gaNcclReduceScatter(%[[T]], %[[WHOLE]], %[[PART]], %[[N]], %[[F32]], %[[SUM]]) {bucket = 2 : i64}
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[RC]], %[[SUM]] : i32
// CHECK:         cf.assert %[[OK]], "ga: gaNcclReduceScatter failed
// CHECK:         %[[PART2:.*]] = llvm.inttoptr {{.*}} : i64 to !llvm.ptr
// CHECK:         %[[WHOLE2:.*]] = llvm.inttoptr {{.*}} : i64 to !llvm.ptr
// CHECK:         call @gaNcclAllGather(%[[T]], %[[PART2]], %[[WHOLE2]], %[[N]], %[[F32]])
// CHECK:         cf.assert %{{.*}}, "ga: gaNcclAllGather failed
// CHECK-NOT:     ga.nccl_
func.func @sharded(%b: memref<12xf32>) {
  %t0 = gpu.wait async
  %v = memref.subview %b[6] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: 6>>
  %t1 = ga.nccl_reduce_scatter async [%t0] %b, %v {bucket = 2 : i64, datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<12xf32>, memref<6xf32, strided<[1], offset: 6>>
  %t2 = ga.nccl_all_gather async [%t1] %v, %b {datatype = 7 : i32, world = 2 : i64} : memref<6xf32, strided<[1], offset: 6>>, memref<12xf32>
  gpu.wait [%t2]
  return
}

// -----

// A CUDA graph: the capture begins on its stream, the body is enqueued where
// the op was, the capture ends after the body's last token (the graph, and
// the stream after it); each launch takes the graph and its stream, whose
// token the launch leaves valid (the loop's carried token folds away); the
// release takes the graph alone.
// CHECK-LABEL: func.func @graph(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    call @mgpuGraphBeginCapture(%[[S]]) : (!gpu.async.token) -> ()
// CHECK-NEXT:    %[[A:.*]] = gpu.launch_func async [%[[S]]] @k::@acc
// CHECK-NEXT:    %[[G:.*]] = call @mgpuGraphEndCapture(%[[A]]) : (!gpu.async.token) -> !llvm.ptr
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      func.call @mgpuGraphLaunch(%[[G]], %[[A]]) : (!llvm.ptr, !gpu.async.token) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    call @mgpuGraphDestroy(%[[G]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    gpu.wait [%[[A]]]
// CHECK-NOT:     ga.graph
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
  func.func @graph(%m: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %g, %e = ga.graph_capture async [%s] {
      %a = gpu.launch_func async [%s] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
      ga.graph_yield %a
    }
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %e) -> (!gpu.async.token) {
      %r = ga.graph_launch async [%d] %g
      scf.yield %r : !gpu.async.token
    }
    ga.graph_destroy %g : !llvm.ptr
    gpu.wait [%t]
    return
  }
}

// -----

// The stream ops: the fork and the join become an event each, recorded on
// the stream waited for (the all-reduce's token is its stream, %c, once
// lowered), waited for and released; the host's wait and the releases
// become mgpuStreamSynchronize and mgpuStreamDestroy.
// CHECK-LABEL: func.func @streams(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    %[[C:.*]] = gpu.wait async
// CHECK-NEXT:    %[[E0:.*]] = call @mgpuEventCreate() : () -> !llvm.ptr
// CHECK-NEXT:    call @mgpuEventRecord(%[[E0]], %[[S]]) : (!llvm.ptr, !gpu.async.token) -> ()
// CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[C]], %[[E0]]) : (!gpu.async.token, !llvm.ptr) -> ()
// CHECK-NEXT:    call @mgpuEventDestroy(%[[E0]]) : (!llvm.ptr) -> ()
// CHECK:         call @gaNcclAllReduce(%[[C]],
// CHECK:         cf.assert
// CHECK-NEXT:    %[[E1:.*]] = call @mgpuEventCreate()
// CHECK-NEXT:    call @mgpuEventRecord(%[[E1]], %[[C]])
// CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[S]], %[[E1]])
// CHECK-NEXT:    call @mgpuEventDestroy(%[[E1]])
// CHECK-NEXT:    call @mgpuStreamDestroy(%[[C]]) : (!gpu.async.token) -> ()
// CHECK-NEXT:    call @mgpuStreamSynchronize(%[[S]]) : (!gpu.async.token) -> ()
// CHECK-NEXT:    call @mgpuStreamDestroy(%[[S]])
// CHECK-NEXT:    return
// CHECK-NOT:     ga.stream
func.func @streams(%b: memref<8xf32>) {
  %s = gpu.wait async
  %c = gpu.wait async
  %f = ga.stream_wait async [%c, %s]
  %r = ga.nccl_all_reduce async [%f] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
  %j = ga.stream_wait async [%s, %r, %f]
  ga.stream_release %c
  ga.stream_synchronize %j
  ga.stream_release %j
  return
}

// -----

// A stream made to wait for two others: an event for each.
// CHECK-LABEL: func.func @two_streams(
// CHECK-SAME:      %[[S:[^:]*]]: !gpu.async.token, %[[A:[^:]*]]: !gpu.async.token, %[[B:[^:]*]]: !gpu.async.token)
// CHECK:         call @mgpuEventRecord(%{{.*}}, %[[A]])
// CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[S]],
// CHECK:         call @mgpuEventRecord(%{{.*}}, %[[B]])
// CHECK-NEXT:    call @mgpuStreamWaitEvent(%[[S]],
// CHECK:         call @mgpuStreamSynchronize(%[[S]])
func.func @two_streams(%s: !gpu.async.token, %a: !gpu.async.token, %b: !gpu.async.token) {
  %j = ga.stream_wait async [%s, %a, %b]
  ga.stream_synchronize %j
  return
}
