// Without a CUDA toolkit named, kernels without math functions and math on
// the host are fine; with one, the kernels of the -invalid test (which call
// libdevice) are too. The IR is unchanged.
// RUN: env -u CUDA_ROOT -u CUDA_HOME -u CUDA_PATH ga-opt %s -ga-check-cuda-toolkit -verify-diagnostics | FileCheck %s
// RUN: env CUDA_HOME=/usr/local/cuda ga-opt %S/ga-check-cuda-toolkit-invalid.mlir -ga-check-cuda-toolkit | FileCheck %s --check-prefix=TOOLKIT

// CHECK-LABEL: gpu.module @no_math
// CHECK: arith.mulf
// CHECK-LABEL: func.func @host_math
// CHECK: math.exp
module attributes {gpu.container_module} {
  gpu.module @no_math {
    gpu.func @k(%x: f32) kernel {
      %y = arith.mulf %x, %x : f32
      gpu.return
    }
  }
  func.func @host_math(%x: f32) -> f32 {
    %e = math.exp %x : f32
    return %e : f32
  }
}

// TOOLKIT-LABEL: gpu.module @kernels
// TOOLKIT: math.tanh
// TOOLKIT: math.exp
