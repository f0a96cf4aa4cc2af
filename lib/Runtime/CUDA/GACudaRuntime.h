//===- GACudaRuntime.h - the mgpu* host ABI on the CUDA driver --*- C++ -*-===//
//
// The functions that host code lowered by `--ga-lower-to-nvvm` calls (the
// `mgpu*` ABI of MLIR's GPU-to-LLVM lowering and of the `gpu.binary` module
// loaders), implemented in libga_cuda_runtime.so on the CUDA driver API, plus
// a few helpers for programs that drive a compiled step (`ga*`).
//
// Errors: every CUDA call is checked. A failure prints
//   ga-cuda-runtime: error: cuInit(0) failed: CUDA_ERROR_NO_DEVICE (100): ...
// to stderr (with a hint when no driver or device is present) and exits the
// process with status 3, instead of returning a null handle that would crash
// later. Module loads run in global constructors of the lowered code, so a
// program without a usable GPU stops before main with that message.
//
// Memory: device allocations are stream-ordered (cuMemAllocAsync /
// cuMemFreeAsync) when the device supports memory pools, else synchronous.
// What a step frees stays in the device's default pool for the next call
// (its release threshold is raised at initialization); see
// gaGpuReleaseCachedMemory.
// Memory returned by a compiled step (its results) is owned by the caller and
// freed with mgpuMemFree(ptr, nullptr) or gaGpuFree(ptr).
//
//===----------------------------------------------------------------------===//

#ifndef GA_RUNTIME_CUDA_GACUDARUNTIME_H
#define GA_RUNTIME_CUDA_GACUDARUNTIME_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque driver handles (CUstream, CUmodule, CUfunction, CUevent).
typedef struct CUstream_st *GAStream;
typedef struct CUmod_st *GAModule;
typedef struct CUfunc_st *GAFunction;
typedef struct CUevent_st *GAEvent;
typedef struct CUgraphExec_st *GAGraphExec;

//===----------------------------------------------------------------------===//
// The mgpu* ABI (signatures as MLIR 22's gpu-to-llvm and gpu.binary
// translation emit them).
//===----------------------------------------------------------------------===//

/// Loads a cubin or fatbin embedded by `gpu-module-to-binary` (format=bin or
/// fatbin); `size` is the size of the image in bytes.
GAModule mgpuModuleLoad(void *data, size_t size);
/// Loads PTX text (format=isa), JIT-compiling it at `optLevel` (0-4).
GAModule mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(GAModule module);
GAFunction mgpuModuleGetFunction(GAModule module, const char *name);
/// Launches `function`; `params` points to `paramsCount` argument pointers.
void mgpuLaunchKernel(GAFunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, GAStream stream,
                      void **params, void **extra, size_t paramsCount);

GAStream mgpuStreamCreate(void);
void mgpuStreamDestroy(GAStream stream);
void mgpuStreamSynchronize(GAStream stream);
void mgpuStreamWaitEvent(GAStream stream, GAEvent event);
GAEvent mgpuEventCreate(void);
void mgpuEventDestroy(GAEvent event);
void mgpuEventSynchronize(GAEvent event);
void mgpuEventRecord(GAEvent event, GAStream stream);

/// Device memory (`isHostShared`: managed memory, accessible from the host).
void *mgpuMemAlloc(uint64_t sizeBytes, GAStream stream, bool isHostShared);
void mgpuMemFree(void *ptr, GAStream stream);
/// Any direction (unified addressing), ordered on `stream`.
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, GAStream stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, GAStream stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, GAStream stream);

/// Page-locks host memory so kernels can access it (gpu.host_register).
void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
void mgpuMemHostUnregister(void *ptr);
void mgpuSetDefaultDevice(int32_t device);

//===----------------------------------------------------------------------===//
// CUDA graphs (the micro-batch loop captured by --ga-capture-cuda-graphs)
//===----------------------------------------------------------------------===//

/// Starts recording the work enqueued on `stream` (nothing runs until the
/// graph is launched). Relaxed capture mode: the first library product of a
/// process creates its handle and workspace (a cuMemAlloc) inside the
/// captured region, which the global and thread-local modes forbid.
void mgpuGraphBeginCapture(GAStream stream);
/// Ends the recording of `stream` and instantiates the graph; the returned
/// executable graph is launched with mgpuGraphLaunch and released with
/// mgpuGraphDestroy.
GAGraphExec mgpuGraphEndCapture(GAStream stream);
/// Enqueues one execution of `graph` on `stream`, after its earlier work.
void mgpuGraphLaunch(GAGraphExec graph, GAStream stream);
/// Releases `graph`; launches still in flight complete first (the driver
/// frees an executable graph asynchronously on completion), so this needs
/// no synchronization.
void mgpuGraphDestroy(GAGraphExec graph);

//===----------------------------------------------------------------------===//
// Helpers for drivers of a compiled step
//===----------------------------------------------------------------------===//

/// Number of CUDA devices, or -1 (with no message and no exit) when no driver
/// or device is usable: lets a program decide to skip the GPU.
int gaGpuDeviceCount(void);
/// Device allocation / free, synchronous with respect to the host.
void *gaGpuAlloc(size_t sizeBytes);
void gaGpuFree(void *ptr);
void gaGpuCopyToDevice(void *dst, const void *src, size_t sizeBytes);
void gaGpuCopyToHost(void *dst, const void *src, size_t sizeBytes);
/// Waits for all work on the device.
void gaGpuSynchronize(void);
/// Hands the device memory that the default pool keeps for later steps (the
/// buffers of finished calls) back to the driver, after all work on the
/// device: for a program that needs it elsewhere (another library's
/// allocator) once training is done.
void gaGpuReleaseCachedMemory(void);
/// Orders the compiled steps that this thread calls after the work already
/// enqueued on `stream` (a CUstream or cudaStream_t of the primary context,
/// e.g. torch.cuda.current_stream().cuda_stream; null: no ordering): each
/// step's own stream waits for an event recorded on `stream` when the step
/// starts. The step still returns only once its work is done.
void gaCudaSetCallerStream(GAStream stream);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // GA_RUNTIME_CUDA_GACUDARUNTIME_H
