//===- CudaErrors.h - failing on a CUDA driver error ------------*- C++ -*-===//
//
// Internal to lib/Runtime/CUDA (not installed): how both runtime libraries
// (libga_cuda_runtime.so, libga_cublaslt_runtime.so) report a failed driver
// call: the call, the error's name (from our own table where the driver, or
// its stub, cannot name it), a note when the error means that the machine
// has no usable GPU, then exit with status 3. A null stream or handle
// returned to generated code would only turn into a segfault later.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_RUNTIME_CUDA_CUDAERRORS_H
#define GA_LIB_RUNTIME_CUDA_CUDAERRORS_H

#include <cuda.h>

#include <cstdio>
#include <cstdlib>

namespace ga::cuda {

/// Exit status of a process stopped by a CUDA error.
constexpr int kExitStatus = 3;

/// Names of the errors a machine without a usable GPU produces, for drivers
/// (or the stub library) whose cuGetErrorName cannot tell.
inline const char *fallbackErrorName(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_DEVICE_UNAVAILABLE:
    return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_DEVICE:
    return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case CUDA_ERROR_INVALID_PTX:
    return "CUDA_ERROR_INVALID_PTX";
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  default:
    return nullptr;
  }
}

/// Whether `r` says that there is no usable driver or GPU.
inline bool meansNoGpu(CUresult r) {
  return r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY ||
         r == CUDA_ERROR_NOT_INITIALIZED ||
         r == CUDA_ERROR_DEVICE_UNAVAILABLE ||
         r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
         r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE;
}

/// Reports the failed driver call `call` (at `file`:`line`, printed with
/// GA_CUDA_DEBUG set) as `<component>: error: ...`, with the note
/// `<component>: note: no usable NVIDIA driver or GPU on this machine;
/// <needsGpu>` where `r` means no GPU, and exits.
[[noreturn]] inline void failDriverCall(const char *component, CUresult r,
                                        const char *call, const char *needsGpu,
                                        const char *file, int line) {
  const char *name = nullptr, *text = nullptr;
  // With the stub library these fail too; then use our own table.
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (!name)
    name = fallbackErrorName(r);
  std::fprintf(stderr, "%s: error: %s failed: %s (%d)%s%s\n", component, call,
               name ? name : "unknown CUDA error", static_cast<int>(r),
               text ? ": " : "", text ? text : "");
  if (meansNoGpu(r))
    std::fprintf(stderr,
                 "%s: note: no usable NVIDIA driver or GPU on this machine; "
                 "%s\n",
                 component, needsGpu);
  if (std::getenv("GA_CUDA_DEBUG"))
    std::fprintf(stderr, "%s: note: at %s:%d\n", component, file, line);
  std::fflush(stderr);
  std::exit(kExitStatus);
}

} // namespace ga::cuda

#endif // GA_LIB_RUNTIME_CUDA_CUDAERRORS_H
