// RUN: env -u CUDA_ROOT -u CUDA_HOME -u CUDA_PATH ga-opt %s -ga-check-cuda-toolkit -split-input-file -verify-diagnostics
// RUN: env -u CUDA_ROOT -u CUDA_PATH CUDA_HOME= ga-opt %s -ga-check-cuda-toolkit -split-input-file -verify-diagnostics

// A kernel that calls a math function needs libdevice, which NVVM
// serialization finds only through CUDA_ROOT, CUDA_HOME or CUDA_PATH (an
// empty value names nothing): the first such op is an error that says so.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: f32) kernel {
      // expected-error @+1 {{this kernel calls libdevice for 'math.tanh': set CUDA_HOME (or CUDA_ROOT, CUDA_PATH) to the CUDA toolkit so that NVVM serialization can link nvvm/libdevice/libdevice.10.bc}}
      %t = math.tanh %x : f32
      %e = math.exp %t : f32
      gpu.return
    }
  }
}

// -----

// A math op without a location (the payload of a named linalg op) is
// reported at the closest enclosing op that has one.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{this kernel calls libdevice for 'math.exp'}}
    gpu.func @k(%x: f32) kernel {
      %e = math.exp %x : f32 loc(unknown)
      gpu.return
    }
  }
}
