//===- GACudaRuntime.cpp - the mgpu* host ABI on the CUDA driver ----------===//
//
// See GACudaRuntime.h. One primary context (device 0, or the one chosen with
// mgpuSetDefaultDevice before the first call), made current on every thread
// that calls in. Every driver call goes through GA_CUDA_CHECK, which names the
// call on failure and exits: a null stream or module returned to generated
// code would only turn into a segfault later.
//
//===----------------------------------------------------------------------===//

#include "GACudaRuntime.h"

#include "CudaErrors.h"

#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace {

[[noreturn]] void fail(CUresult r, const char *call, const char *file,
                       int line) {
  ga::cuda::failDriverCall("ga-cuda-runtime", r, call,
                           "the compiled step needs one to run", file, line);
}

#define GA_CUDA_CHECK(expr)                                                    \
  do {                                                                         \
    CUresult gaResult_ = (expr);                                               \
    if (gaResult_ != CUDA_SUCCESS)                                             \
      fail(gaResult_, #expr, __FILE__, __LINE__);                              \
  } while (false)

std::atomic<int> defaultDevice{0};

struct DeviceState {
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool memoryPools = false;
};

/// Keeps what a step frees in the device's default pool across
/// synchronizations. The pool's default release threshold (0) hands every
/// freed byte back to the driver at each synchronization, so a step whose
/// buffers take gigabytes maps them again at every call (measured on an
/// H200: 60 ms of a 234 ms GPT-2-124M step). Like PyTorch's caching
/// allocator, the pool keeps them; gaGpuReleaseCachedMemory hands them back.
void keepPoolMemory(CUdevice device) {
  CUmemoryPool pool = nullptr;
  GA_CUDA_CHECK(cuDeviceGetDefaultMemPool(&pool, device));
  cuuint64_t keep = ~cuuint64_t(0);
  GA_CUDA_CHECK(
      cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
}

/// Initializes the driver and retains the primary context once; makes it
/// current on the calling thread.
DeviceState &state() {
  static DeviceState s;
  static std::once_flag once;
  std::call_once(once, [] {
    GA_CUDA_CHECK(cuInit(0));
    int count = 0;
    GA_CUDA_CHECK(cuDeviceGetCount(&count));
    if (count == 0)
      fail(CUDA_ERROR_NO_DEVICE, "cuDeviceGetCount(&count) == 0", __FILE__,
           __LINE__);
    GA_CUDA_CHECK(cuDeviceGet(&s.device, defaultDevice.load()));
    GA_CUDA_CHECK(cuDevicePrimaryCtxRetain(&s.context, s.device));
    int pools = 0;
    GA_CUDA_CHECK(cuDeviceGetAttribute(
        &pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, s.device));
    s.memoryPools = pools != 0 && !std::getenv("GA_CUDA_SYNC_ALLOC");
    if (s.memoryPools)
      keepPoolMemory(s.device);
  });
  thread_local bool current = false;
  if (!current) {
    GA_CUDA_CHECK(cuCtxSetCurrent(s.context));
    current = true;
  }
  return s;
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

extern "C" GAModule mgpuModuleLoad(void *data, size_t /*size*/) {
  state();
  CUmodule module = nullptr;
  GA_CUDA_CHECK(cuModuleLoadData(&module, data));
  return reinterpret_cast<GAModule>(module);
}

extern "C" GAModule mgpuModuleLoadJIT(void *data, int optLevel) {
  state();
  CUmodule module = nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log))};
  CUresult r = cuModuleLoadDataEx(&module, data, 3, options, values);
  if (r != CUDA_SUCCESS) {
    if (log[0])
      std::fprintf(stderr, "ga-cuda-runtime: PTX JIT log:\n%s\n", log);
    fail(r, "cuModuleLoadDataEx(&module, ptx, ...)", __FILE__, __LINE__);
  }
  return reinterpret_cast<GAModule>(module);
}

extern "C" void mgpuModuleUnload(GAModule module) {
  // Runs in a global destructor: the context may be gone at exit already.
  if (module)
    (void)cuModuleUnload(reinterpret_cast<CUmodule>(module));
}

extern "C" GAFunction mgpuModuleGetFunction(GAModule module, const char *name) {
  state();
  CUfunction function = nullptr;
  CUresult r =
      cuModuleGetFunction(&function, reinterpret_cast<CUmodule>(module), name);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "ga-cuda-runtime: kernel '%s'\n", name);
    fail(r, "cuModuleGetFunction(&function, module, name)", __FILE__, __LINE__);
  }
  return reinterpret_cast<GAFunction>(function);
}

extern "C" void mgpuLaunchKernel(GAFunction function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t smem, GAStream stream,
                                 void **params, void **extra,
                                 size_t /*paramsCount*/) {
  state();
  GA_CUDA_CHECK(cuLaunchKernel(
      reinterpret_cast<CUfunction>(function), gridX, gridY, gridZ, blockX,
      blockY, blockZ, smem, reinterpret_cast<CUstream>(stream), params, extra));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

// The lowered code creates a stream for every region of launches (one per
// micro-batch: gpu-async-region) and destroys it after synchronizing; a
// small pool makes that a list operation instead of two driver calls.
namespace {
struct StreamPool {
  std::mutex mutex;
  std::vector<CUstream> free;
};
StreamPool &streamPool() {
  static StreamPool *pool = new StreamPool(); // never destroyed: used at exit
  return *pool;
}
} // namespace

/// The stream of the caller of a compiled step on this thread
/// (gaCudaSetCallerStream), or null.
static thread_local CUstream callerStream = nullptr;

/// A stream for a compiled step: from the pool, else a new non-blocking one.
static CUstream takeStream() {
  {
    StreamPool &pool = streamPool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.free.empty()) {
      CUstream s = pool.free.back();
      pool.free.pop_back();
      return s;
    }
  }
  CUstream stream = nullptr;
  GA_CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

extern "C" GAStream mgpuStreamCreate(void) {
  state();
  CUstream stream = takeStream();
  if (callerStream) {
    // The step's work starts after what the caller enqueued before the call
    // (PyTorch's copies of the inputs, say); it ends with a synchronization
    // of this stream, so the caller's later work sees its results.
    CUevent event = nullptr;
    GA_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    GA_CUDA_CHECK(cuEventRecord(event, callerStream));
    GA_CUDA_CHECK(cuStreamWaitEvent(stream, event, 0));
    GA_CUDA_CHECK(cuEventDestroy(event));
  }
  return reinterpret_cast<GAStream>(stream);
}

extern "C" void gaCudaSetCallerStream(GAStream stream) {
  callerStream = reinterpret_cast<CUstream>(stream);
}

extern "C" void mgpuStreamDestroy(GAStream stream) {
  state();
  // Returned to the pool only once idle, like cuStreamDestroy's semantics
  // (work already queued completes).
  GA_CUDA_CHECK(cuStreamSynchronize(reinterpret_cast<CUstream>(stream)));
  StreamPool &pool = streamPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (pool.free.size() < 16) {
    pool.free.push_back(reinterpret_cast<CUstream>(stream));
    return;
  }
  GA_CUDA_CHECK(cuStreamDestroy(reinterpret_cast<CUstream>(stream)));
}

extern "C" void mgpuStreamSynchronize(GAStream stream) {
  state();
  GA_CUDA_CHECK(cuStreamSynchronize(reinterpret_cast<CUstream>(stream)));
}

extern "C" void mgpuStreamWaitEvent(GAStream stream, GAEvent event) {
  state();
  GA_CUDA_CHECK(cuStreamWaitEvent(reinterpret_cast<CUstream>(stream),
                                  reinterpret_cast<CUevent>(event), 0));
}

extern "C" GAEvent mgpuEventCreate(void) {
  state();
  CUevent event = nullptr;
  GA_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return reinterpret_cast<GAEvent>(event);
}

extern "C" void mgpuEventDestroy(GAEvent event) {
  state();
  GA_CUDA_CHECK(cuEventDestroy(reinterpret_cast<CUevent>(event)));
}

extern "C" void mgpuEventSynchronize(GAEvent event) {
  state();
  GA_CUDA_CHECK(cuEventSynchronize(reinterpret_cast<CUevent>(event)));
}

extern "C" void mgpuEventRecord(GAEvent event, GAStream stream) {
  state();
  GA_CUDA_CHECK(cuEventRecord(reinterpret_cast<CUevent>(event),
                              reinterpret_cast<CUstream>(stream)));
}

//===----------------------------------------------------------------------===//
// CUDA graphs
//===----------------------------------------------------------------------===//

// Streams come from mgpuStreamCreate (CU_STREAM_NON_BLOCKING): capture needs a
// stream other than the legacy default stream, and a non-blocking one does
// not join the implicit synchronization with it.

extern "C" void mgpuGraphBeginCapture(GAStream stream) {
  state();
  GA_CUDA_CHECK(cuStreamBeginCapture(reinterpret_cast<CUstream>(stream),
                                     CU_STREAM_CAPTURE_MODE_RELAXED));
}

extern "C" GAGraphExec mgpuGraphEndCapture(GAStream stream) {
  state();
  CUgraph graph = nullptr;
  GA_CUDA_CHECK(cuStreamEndCapture(reinterpret_cast<CUstream>(stream), &graph));
  CUgraphExec exec = nullptr;
  GA_CUDA_CHECK(cuGraphInstantiate(&exec, graph, 0));
  // The executable graph does not refer to the graph it was made from.
  GA_CUDA_CHECK(cuGraphDestroy(graph));
  return reinterpret_cast<GAGraphExec>(exec);
}

extern "C" void mgpuGraphLaunch(GAGraphExec graph, GAStream stream) {
  state();
  GA_CUDA_CHECK(cuGraphLaunch(reinterpret_cast<CUgraphExec>(graph),
                              reinterpret_cast<CUstream>(stream)));
}

extern "C" void mgpuGraphDestroy(GAGraphExec graph) {
  state();
  GA_CUDA_CHECK(cuGraphExecDestroy(reinterpret_cast<CUgraphExec>(graph)));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, GAStream stream,
                              bool isHostShared) {
  DeviceState &s = state();
  if (sizeBytes == 0)
    sizeBytes = 1; // a valid, distinct pointer for empty buffers
  CUdeviceptr ptr = 0;
  if (isHostShared)
    GA_CUDA_CHECK(cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL));
  else if (s.memoryPools)
    GA_CUDA_CHECK(
        cuMemAllocAsync(&ptr, sizeBytes, reinterpret_cast<CUstream>(stream)));
  else
    GA_CUDA_CHECK(cuMemAlloc(&ptr, sizeBytes));
  return reinterpret_cast<void *>(ptr);
}

extern "C" void mgpuMemFree(void *ptr, GAStream stream) {
  DeviceState &s = state();
  if (!ptr)
    return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(ptr);
  // Managed memory is not pool memory: cuMemFree for it in any case.
  CUmemorytype type = CU_MEMORYTYPE_DEVICE;
  unsigned isManaged = 0;
  void *attrs[] = {&type, &isManaged};
  CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED};
  GA_CUDA_CHECK(cuPointerGetAttributes(2, names, attrs, p));
  if (s.memoryPools && !isManaged)
    GA_CUDA_CHECK(cuMemFreeAsync(p, reinterpret_cast<CUstream>(stream)));
  else
    GA_CUDA_CHECK(cuMemFree(p));
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           GAStream stream) {
  state();
  GA_CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                              reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                              reinterpret_cast<CUstream>(stream)));
}

extern "C" void mgpuMemset32(void *dst, uint32_t value, size_t count,
                             GAStream stream) {
  state();
  GA_CUDA_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, reinterpret_cast<CUstream>(stream)));
}

extern "C" void mgpuMemset16(void *dst, uint16_t value, size_t count,
                             GAStream stream) {
  state();
  GA_CUDA_CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, reinterpret_cast<CUstream>(stream)));
}

extern "C" void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  state();
  GA_CUDA_CHECK(cuMemHostRegister(ptr, sizeBytes, 0));
}

extern "C" void mgpuMemHostUnregister(void *ptr) {
  state();
  GA_CUDA_CHECK(cuMemHostUnregister(ptr));
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice.store(device);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

extern "C" int gaGpuDeviceCount(void) {
  if (cuInit(0) != CUDA_SUCCESS)
    return -1;
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
    return -1;
  return count;
}

extern "C" void *gaGpuAlloc(size_t sizeBytes) {
  // The same allocator as the compiled code, so that either may free it.
  void *ptr = mgpuMemAlloc(sizeBytes, nullptr, false);
  gaGpuSynchronize();
  return ptr;
}

extern "C" void gaGpuFree(void *ptr) {
  if (!ptr)
    return;
  gaGpuSynchronize();
  mgpuMemFree(ptr, nullptr);
  gaGpuSynchronize();
}

extern "C" void gaGpuCopyToDevice(void *dst, const void *src,
                                  size_t sizeBytes) {
  state();
  GA_CUDA_CHECK(
      cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, sizeBytes));
}

extern "C" void gaGpuCopyToHost(void *dst, const void *src, size_t sizeBytes) {
  state();
  GA_CUDA_CHECK(
      cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), sizeBytes));
}

extern "C" void gaGpuReleaseCachedMemory(void) {
  DeviceState &s = state();
  if (!s.memoryPools)
    return;
  GA_CUDA_CHECK(cuCtxSynchronize());
  CUmemoryPool pool = nullptr;
  GA_CUDA_CHECK(cuDeviceGetDefaultMemPool(&pool, s.device));
  GA_CUDA_CHECK(cuMemPoolTrimTo(pool, 0));
}

extern "C" void gaGpuSynchronize(void) {
  state();
  GA_CUDA_CHECK(cuCtxSynchronize());
}
