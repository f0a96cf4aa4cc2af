// RUN: ga-opt %s --split-input-file --ga-overlap-all-reduce --verify-diagnostics

// Before ga-gpu-single-stream: the call has no stream token yet.
module attributes {gpu.container_module} {
  func.func private @gaNcclAllReduce(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
  func.func @unthreaded(%p: !llvm.ptr) -> i32 {
    %null = llvm.mlir.zero : !llvm.ptr
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    // expected-error @below {{has no stream token as its first operand: ga-overlap-all-reduce runs after ga-gpu-single-stream}}
    %r = func.call @gaNcclAllReduce(%null, %p, %n, %c, %c) : (!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
    return %r : i32
  }
}

// -----

// A function named like a runtime function the pass calls, of another type.
module attributes {gpu.container_module} {
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  // expected-error @below {{has the name of a GPU runtime function with another type; expected '() -> !llvm.ptr'}}
  func.func private @mgpuEventCreate() -> i64
  func.func @f(%t: !gpu.async.token, %p: !llvm.ptr) -> i32 {
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    %r = func.call @gaNcclAllReduce(%t, %p, %n, %c, %c) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    return %r : i32
  }
}

// -----

// What is left in place, with a remark: a buffer that is not the address of
// a memref; a loop with dynamic bounds; a loop whose micro-batches wait for
// the host.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }
  func.func private @gaNcclAllReduce(!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
  func.func private @mgpuStreamSynchronize(!gpu.async.token)

  func.func @unknown_pointer(%t: !gpu.async.token, %p: !llvm.ptr) -> i32 {
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    // expected-remark @below {{left in place: its buffer is not recognized as the address of a memref}}
    %r = func.call @gaNcclAllReduce(%t, %p, %n, %c, %c) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    return %r : i32
  }

  func.func @dynamic_bounds(%b: memref<8xf32>, %s: !gpu.async.token, %m: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    // expected-note @below {{the loop}}
    %t = scf.for %i = %c0 to %m step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    %i = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
    %l = arith.index_cast %i : index to i64
    %p = llvm.inttoptr %l : i64 to !llvm.ptr
    // expected-remark @below {{left in place: the last iteration of the micro-batch loop cannot be peeled: its bounds are not constant}}
    %r = func.call @gaNcclAllReduce(%t, %p, %n, %c, %c) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    return %r : i32
  }

  func.func @host_wait(%b: memref<8xf32>, %s: !gpu.async.token) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %n = arith.constant 8 : i64
    %c = arith.constant 7 : i32
    // expected-note @below {{the loop}}
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      func.call @mgpuStreamSynchronize(%a) : (!gpu.async.token) -> ()
      scf.yield %a : !gpu.async.token
    }
    %i = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
    %l = arith.index_cast %i : index to i64
    %p = llvm.inttoptr %l : i64 to !llvm.ptr
    // expected-remark @below {{left in place: the last iteration of the micro-batch loop cannot be peeled: the host waits for the stream inside it}}
    %r = func.call @gaNcclAllReduce(%t, %p, %n, %c, %c) : (!gpu.async.token, !llvm.ptr, i64, i32, i32) -> i32
    return %r : i32
  }
}
