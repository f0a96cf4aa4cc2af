// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-gpu-single-stream

// The pass orders synchronous GPU ops: streams made by an earlier pass
// (gpu-async-region) are refused rather than chained twice.
module attributes {gpu.container_module} {
  func.func @already_async() {
    // expected-error @+1 {{'gpu.wait' op is already a stream synchronization; ga-gpu-single-stream expects synchronous GPU ops}}
    %t = gpu.wait async
    %m, %a = gpu.alloc async [%t] () : memref<4xf32>
    return
  }
}

// -----

// A function of the module that has the name of a runtime function the pass
// calls, with another type.
module attributes {gpu.container_module} {
  // expected-error @+1 {{'func.func' op has the name of a GPU runtime function with another type}}
  func.func private @mgpuStreamSynchronize(i32)
  func.func @step() {
    %m = gpu.alloc () : memref<4xf32>
    return
  }
}
