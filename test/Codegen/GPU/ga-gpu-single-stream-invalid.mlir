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

