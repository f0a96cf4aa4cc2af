// RUN: ga-opt %s -split-input-file --ga-capture-cuda-graphs -verify-diagnostics

// Bodies a graph cannot replay exactly are left as they are, with a remark
// that names the op and the reason.

// A read-back: a copy into host memory, then a host wait.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @read_back(%m: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %h = memref.alloca() : memref<f32>
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      // expected-remark @below {{loop not captured as a CUDA graph: 'gpu.memcpy' copies from or to host memory (a read-back)}}
      %c = gpu.memcpy async [%a] %h, %m : memref<f32>, memref<f32>
      ga.stream_synchronize %c
      %n = gpu.wait async
      scf.yield %n : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A host synchronization.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @sync(%m: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      // expected-remark @below {{loop not captured as a CUDA graph: 'ga.stream_synchronize' is a host synchronization}}
      ga.stream_synchronize %a
      scf.yield %a : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// An allocation in every iteration (a buffer of dynamic size).
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<?xf32>) kernel { gpu.return }
  }
  func.func @alloc(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      // expected-remark @below {{loop not captured as a CUDA graph: 'gpu.alloc' allocates device memory in every iteration}}
      %m, %a = gpu.alloc async [%d] (%n) : memref<?xf32>
      %b = gpu.launch_func async [%a] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
      %f = gpu.dealloc async [%b] %m : memref<?xf32>
      scf.yield %f : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A launch whose grid depends on the induction variable (a micro-batch of
// dynamic size): a graph would replay the first iteration's grid.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @grid(%m: memref<f32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %g = arith.minui %i, %n : index
      // expected-remark @below {{loop not captured as a CUDA graph: 'gpu.launch_func' uses a value that depends on the induction variable (a graph replays the arguments of its first iteration)}}
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%g, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      scf.yield %a : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// Host control flow in the body.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @branch(%m: memref<f32>, %p: i1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      // expected-remark @below {{loop not captured as a CUDA graph: 'scf.if' is host control flow inside the loop}}
      %r = scf.if %p -> (!gpu.async.token) {
        %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
        scf.yield %a : !gpu.async.token
      } else {
        scf.yield %d : !gpu.async.token
      }
      scf.yield %r : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A host access to memory in the body.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @host_store(%m: memref<f32>, %h: memref<f32>, %v: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      // expected-remark @below {{loop not captured as a CUDA graph: 'memref.store' accesses memory on the host}}
      memref.store %v, %h[] : memref<f32>
      scf.yield %a : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A loop that carries a value besides the stream's token.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @carried(%m: memref<f32>, %v: f32) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    // expected-remark @below {{loop not captured as a CUDA graph: 'scf.for' carries values other than the stream's token}}
    %t:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %v, %d = %s) -> (f32, !gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      %y = arith.addf %x, %x : f32
      scf.yield %y, %a : f32, !gpu.async.token
    }
    gpu.wait [%t#1]
    return %t#0 : f32
  }
}

// -----

// GPU work that is not ordered on the body's chain (a second stream).
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @unordered(%m: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      // expected-remark @below {{loop not captured as a CUDA graph: 'gpu.launch_func' is not ordered after the body's previous GPU op on the stream}}
      %b = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      scf.yield %b : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A nested loop whose trip count depends on the micro-batch: a graph would
// replay the first iteration's count.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @nested_dependent(%m: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      // expected-remark @below {{loop not captured as a CUDA graph: 'scf.for' uses a value that depends on the induction variable (a graph replays the arguments of its first iteration)}}
      %g = scf.for %j = %c0 to %i step %c1 iter_args(%e = %d) -> (!gpu.async.token) {
        %a = gpu.launch_func async [%e] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
        scf.yield %a : !gpu.async.token
      }
      scf.yield %g : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A nested loop that does not carry the stream's token: its work is not
// ordered on the captured stream.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @nested_unordered(%m: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      // expected-remark @below {{loop not captured as a CUDA graph: 'scf.for' is a nested loop that does not carry the stream's token}}
      // expected-remark @below {{loop not captured as a CUDA graph: 'scf.for' carries values other than the stream's token}}
      scf.for %j = %c0 to %c4 step %c1 {
        %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      }
      scf.yield %d : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A library product that writes host memory (by its memory effects: an
// allocation that stayed on the host), although it is ordered on the stream.
module attributes {gpu.container_module} {
  func.func @library_on_host(%w: memref<2x2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %h = memref.alloc() : memref<2x2xf32>
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      // expected-remark @below {{loop not captured as a CUDA graph: 'ga.blas_matmul' accesses memory on the host}}
      %l = ga.blas_matmul async [%d] %w, %w, %h : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>
      scf.yield %l : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// An NCCL all-reduce in the body: collectives are not recorded.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
  func.func @collective(%m: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
      // expected-remark @below {{loop not captured as a CUDA graph: 'ga.nccl_all_reduce' is a collective between ranks}}
      %r = ga.nccl_all_reduce async [%a] %m {datatype = 7 : i32, reduction = 0 : i32} : memref<4xf32>
      scf.yield %r : !gpu.async.token
    }
    gpu.wait [%t]
    return
  }
}

// -----

// A wait for another stream in the body: that stream's work would have to
// be recorded too.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<f32>) kernel { gpu.return }
  }
  func.func @other_stream(%m: memref<f32>, %o: !gpu.async.token) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
      // expected-remark @below {{loop not captured as a CUDA graph: 'ga.stream_wait' is a wait between streams}}
      %w = ga.stream_wait async [%a, %o]
      scf.yield %w : !gpu.async.token
    }
    ga.stream_synchronize %t
    return
  }
}
