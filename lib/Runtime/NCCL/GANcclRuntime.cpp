//===- GANcclRuntime.cpp - NCCL collectives for lowered steps -------------===//
//
// A small runtime over NCCL and the CUDA runtime for code lowered by
// --convert-ga-to-nccl. One communicator per process (the data-parallel
// group), set up from MPI or from the environment.
//
//===----------------------------------------------------------------------===//

#include "GANcclRuntime.h"
#include "ga-runtime/GARuntimeABI.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

// gaNcclAllReduce as GARuntimeABI.h places its operands: the stream first
// (a pointer the passes replace by the step's), then the buffer.
static_assert(
    std::is_same_v<ga_abi::FunctionTraits<decltype(&gaNcclAllReduce)>::Arg<
                       ga_abi::kNcclAllReduceStream>,
                   void *>);
static_assert(
    std::is_same_v<ga_abi::FunctionTraits<decltype(&gaNcclAllReduce)>::Arg<
                       ga_abi::kNcclAllReduceBuffer>,
                   void *>);

// The sharded collectives: the stream, then the input and the output.
template <typename F> constexpr bool checkShardedABI() {
  using T = ga_abi::FunctionTraits<F>;
  return std::is_same_v<typename T::template Arg<ga_abi::kNcclShardedStream>,
                        void *> &&
         std::is_same_v<typename T::template Arg<ga_abi::kNcclShardedInput>,
                        const void *> &&
         std::is_same_v<typename T::template Arg<ga_abi::kNcclShardedOutput>,
                        void *>;
}
static_assert(checkShardedABI<decltype(&gaNcclReduceScatter)>());
static_assert(checkShardedABI<decltype(&gaNcclAllGather)>());

namespace {
ncclComm_t gComm = nullptr;
cudaStream_t gStream = nullptr;
int64_t gCalls = 0;
GANcclAllReduceFn gForward = nullptr; // gaNcclForwardAllReduce
int64_t gShardedCalls = 0;
GANcclReduceScatterFn gForwardScatter = nullptr; // gaNcclForwardSharded
GANcclAllGatherFn gForwardGather = nullptr;

int32_t ncclFailed(const char *what, ncclResult_t result) {
  std::fprintf(stderr, "ga NCCL runtime: %s failed: %s\n", what,
               ncclGetErrorString(result));
  return 1;
}

int32_t cudaFailed(const char *what, cudaError_t error) {
  std::fprintf(stderr, "ga NCCL runtime: %s failed: %s\n", what,
               cudaGetErrorString(error));
  return 1;
}

int32_t fail(const char *message) {
  std::fprintf(stderr, "ga NCCL runtime: %s\n", message);
  return 1;
}

/// The stream that a collective called with `stream` enqueues on: `stream`,
/// or for a null one (a caller without streams) the runtime's own after the
/// device has finished all earlier work. Null on failure (reported).
cudaStream_t enqueueStream(void *stream) {
  if (stream)
    return static_cast<cudaStream_t>(stream);
  // The step's kernels may be on any stream: wait for all of them.
  if (cudaError_t error = cudaDeviceSynchronize()) {
    cudaFailed("cudaDeviceSynchronize", error);
    return nullptr;
  }
  return gStream;
}

/// After a collective enqueued on `target` for a caller's `stream`: a null
/// one waits for its result.
int32_t finish(void *stream, cudaStream_t target) {
  if (!stream)
    if (cudaError_t error = cudaStreamSynchronize(target))
      return cudaFailed("cudaStreamSynchronize", error);
  return 0;
}

/// Fails unless the communicator exists and `dtype` (and `op`) are NCCL's.
int32_t checkCall(const char *name, int32_t dtype, int32_t op) {
  if (!gComm) {
    std::fprintf(stderr,
                 "ga NCCL runtime: %s: no communicator (call "
                 "gaNcclInitFromMPI or gaNcclInitFromEnv first)\n",
                 name);
    return 1;
  }
  if (dtype < 0 || dtype >= ncclNumTypes || op < 0 || op >= ncclNumOps) {
    std::fprintf(stderr,
                 "ga NCCL runtime: %s: unknown datatype or "
                 "reduction\n",
                 name);
    return 1;
  }
  return 0;
}

/// Selects the GPU and creates the communicator and the runtime's stream.
int32_t initComm(const ncclUniqueId &id, int rank, int nranks, int device) {
  if (gComm)
    return fail("the communicator is already initialized");
  int devices = 0;
  if (cudaError_t error = cudaGetDeviceCount(&devices))
    return cudaFailed("cudaGetDeviceCount", error);
  if (devices == 0)
    return fail("no CUDA device");
  if (cudaError_t error = cudaSetDevice(device % devices))
    return cudaFailed("cudaSetDevice", error);
  if (ncclResult_t result = ncclCommInitRank(&gComm, nranks, id, rank)) {
    gComm = nullptr;
    return ncclFailed("ncclCommInitRank", result);
  }
  if (cudaError_t error =
          cudaStreamCreateWithFlags(&gStream, cudaStreamNonBlocking))
    return cudaFailed("cudaStreamCreateWithFlags", error);
  return 0;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}
} // namespace

extern "C" {

int32_t gaNcclGetVersion(void) {
  int version = 0;
  if (ncclResult_t result = ncclGetVersion(&version))
    return ncclFailed("ncclGetVersion", result), -1;
  return version;
}

int32_t gaNcclHasMPI(void) {
#ifdef GA_NCCL_WITH_MPI
  return 1;
#else
  return 0;
#endif
}

int32_t gaNcclInitWithId(const void *id, int32_t rank, int32_t nranks,
                         int32_t device) {
  if (!id || nranks < 1 || rank < 0 || rank >= nranks || device < 0)
    return fail("gaNcclInitWithId: need an id and 0 <= rank < nranks");
  ncclUniqueId unique;
  std::memcpy(&unique, id, sizeof unique);
  return initComm(unique, rank, nranks, device);
}

int32_t gaNcclUniqueId(void *out) {
  ncclUniqueId id;
  if (ncclResult_t result = ncclGetUniqueId(&id))
    return ncclFailed("ncclGetUniqueId", result);
  std::memcpy(out, &id, sizeof id);
  return 0;
}

int64_t gaNcclUniqueIdBytes(void) { return sizeof(ncclUniqueId); }

int32_t gaNcclUniqueIdHex(char *out) {
  ncclUniqueId id;
  if (int32_t status = gaNcclUniqueId(&id))
    return status;
  static const char digits[] = "0123456789abcdef";
  const auto *bytes = reinterpret_cast<const unsigned char *>(&id);
  for (size_t i = 0; i < sizeof id; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * sizeof id] = '\0';
  return 0;
}

int32_t gaNcclInitFromEnv(void) {
  const char *hex = std::getenv("GA_NCCL_ID");
  const char *rankText = std::getenv("GA_NCCL_RANK");
  const char *nranksText = std::getenv("GA_NCCL_NRANKS");
  if (!hex || !rankText || !nranksText)
    return fail("gaNcclInitFromEnv: set GA_NCCL_ID, GA_NCCL_RANK and "
                "GA_NCCL_NRANKS");
  ncclUniqueId id;
  if (std::strlen(hex) != 2 * sizeof id)
    return fail("gaNcclInitFromEnv: GA_NCCL_ID must be 256 hex digits");
  auto *bytes = reinterpret_cast<unsigned char *>(&id);
  for (size_t i = 0; i < sizeof id; ++i) {
    int high = hexValue(hex[2 * i]), low = hexValue(hex[2 * i + 1]);
    if (high < 0 || low < 0)
      return fail("gaNcclInitFromEnv: GA_NCCL_ID is not hexadecimal");
    bytes[i] = static_cast<unsigned char>(high * 16 + low);
  }
  int rank = std::atoi(rankText), nranks = std::atoi(nranksText);
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail("gaNcclInitFromEnv: need 0 <= GA_NCCL_RANK < GA_NCCL_NRANKS");
  const char *deviceText = std::getenv("GA_NCCL_DEVICE");
  return initComm(id, rank, nranks, deviceText ? std::atoi(deviceText) : rank);
}

int32_t gaNcclAllReduce(void *stream, void *buffer, int64_t count,
                        int32_t dtype, int32_t op) {
  if (gForward) {
    ++gCalls;
    return gForward(stream, buffer, count, dtype, op);
  }
  if (!gComm)
    return fail("gaNcclAllReduce: no communicator (call gaNcclInitFromMPI "
                "or gaNcclInitFromEnv first)");
  if (dtype < 0 || dtype >= ncclNumTypes || op < 0 || op >= ncclNumOps)
    return fail("gaNcclAllReduce: unknown datatype or reduction");
  ++gCalls;
  auto *target = static_cast<cudaStream_t>(stream);
  if (!target) {
    // The step's kernels may be on any stream: wait for all of them.
    if (cudaError_t error = cudaDeviceSynchronize())
      return cudaFailed("cudaDeviceSynchronize", error);
    target = gStream;
  }
  if (ncclResult_t result =
          ncclAllReduce(buffer, buffer, static_cast<size_t>(count),
                        static_cast<ncclDataType_t>(dtype),
                        static_cast<ncclRedOp_t>(op), gComm, target))
    return ncclFailed("ncclAllReduce", result);
  if (!stream)
    if (cudaError_t error = cudaStreamSynchronize(target))
      return cudaFailed("cudaStreamSynchronize", error);
  return 0;
}

int32_t gaNcclReduceScatter(void *stream, const void *input, void *output,
                            int64_t count, int32_t dtype, int32_t op) {
  ++gShardedCalls;
  if (gForwardScatter)
    return gForwardScatter(stream, input, output, count, dtype, op);
  if (int32_t status = checkCall("gaNcclReduceScatter", dtype, op))
    return status;
  cudaStream_t target = enqueueStream(stream);
  if (!target)
    return 1;
  if (ncclResult_t result =
          ncclReduceScatter(input, output, static_cast<size_t>(count),
                            static_cast<ncclDataType_t>(dtype),
                            static_cast<ncclRedOp_t>(op), gComm, target))
    return ncclFailed("ncclReduceScatter", result);
  return finish(stream, target);
}

int32_t gaNcclAllGather(void *stream, const void *input, void *output,
                        int64_t count, int32_t dtype) {
  ++gShardedCalls;
  if (gForwardGather)
    return gForwardGather(stream, input, output, count, dtype);
  if (int32_t status = checkCall("gaNcclAllGather", dtype, /*op=*/0))
    return status;
  cudaStream_t target = enqueueStream(stream);
  if (!target)
    return 1;
  if (ncclResult_t result =
          ncclAllGather(input, output, static_cast<size_t>(count),
                        static_cast<ncclDataType_t>(dtype), gComm, target))
    return ncclFailed("ncclAllGather", result);
  return finish(stream, target);
}

int64_t gaNcclShardedCalls(void) { return gShardedCalls; }

void gaNcclForwardSharded(GANcclReduceScatterFn scatter,
                          GANcclAllGatherFn gather) {
  gForwardScatter = scatter;
  gForwardGather = gather;
}

int64_t gaNcclAllReduceCalls(void) { return gCalls; }

void gaNcclForwardAllReduce(GANcclAllReduceFn fn) { gForward = fn; }

int32_t gaNcclFinalize(void) {
  int32_t status = 0;
  if (gComm)
    if (ncclResult_t result = ncclCommDestroy(gComm))
      status = ncclFailed("ncclCommDestroy", result);
  gComm = nullptr;
  if (gStream)
    cudaStreamDestroy(gStream);
  gStream = nullptr;
  return status;
}

} // extern "C"
