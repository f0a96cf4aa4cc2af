// RUN: ga-opt %s --split-input-file --ga-overlap-all-reduce --verify-diagnostics

// Before ga-gpu-single-stream: the all-reduce is not ordered on a stream yet.
module attributes {gpu.container_module} {
  func.func @unthreaded(%b: memref<8xf32>) {
    // expected-error @below {{is not ordered on a stream: ga-overlap-all-reduce runs after ga-gpu-single-stream}}
    ga.nccl_all_reduce %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
    return
  }
}

// -----

// What is left in place, with a remark: a buffer that nothing before the
// all-reduce accesses (no stream to fork from); a loop with dynamic bounds;
// a loop whose micro-batches wait for the host.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%a: memref<8xf32>) kernel { gpu.return }
  }

  func.func @untouched(%t: !gpu.async.token, %b: memref<8xf32>) {
    // expected-remark @below {{left in place: no stream after the last op that may access its buffer}}
    %r = ga.nccl_all_reduce async [%t] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
    return
  }

  func.func @dynamic_bounds(%b: memref<8xf32>, %s: !gpu.async.token, %m: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-note @below {{the loop}}
    %t = scf.for %i = %c0 to %m step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      scf.yield %a : !gpu.async.token
    }
    // expected-remark @below {{left in place: the last iteration of the micro-batch loop cannot be peeled: its bounds are not constant}}
    %r = ga.nccl_all_reduce async [%t] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
    return
  }

  func.func @host_wait(%b: memref<8xf32>, %s: !gpu.async.token) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    // expected-note @below {{the loop}}
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      ga.stream_synchronize %a
      scf.yield %a : !gpu.async.token
    }
    // expected-remark @below {{left in place: the last iteration of the micro-batch loop cannot be peeled: the host waits for the stream inside it}}
    %r = ga.nccl_all_reduce async [%t] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
    return
  }
}
