//===- GANcclRuntime.h - NCCL collectives for lowered steps -------*- C -*-===//
//
// The C ABI that --convert-ga-to-nccl calls (gaNcclAllReduce), and the
// communicator set-up that the host program calls once per process before
// the first step. All functions return 0 on success; on failure they print
// one line naming the call and NCCL's/CUDA's reason to stderr and return a
// non-zero value (the lowered step then aborts with a message).
//
//===----------------------------------------------------------------------===//

#ifndef GA_RUNTIME_NCCL_GANCCLRUNTIME_H
#define GA_RUNTIME_NCCL_GANCCLRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// NCCL's version code (e.g. 22807 for 2.28.7); works without a GPU.
int32_t gaNcclGetVersion(void);

/// Whether the MPI bootstrap (libGANcclMPI.so, gaNcclInitFromMPI) was built
/// beside this library.
int32_t gaNcclHasMPI(void);

/// Communicator over MPI_COMM_WORLD (MPI must be initialized): rank 0 creates
/// the NCCL unique id and broadcasts it with MPI_Bcast; each rank uses the
/// GPU (local rank on its node) modulo the number of GPUs. Defined in
/// libGANcclMPI.so (with MPICH), not in libGANcclRuntime.so, which compiled
/// steps need and which must not depend on MPI.
int32_t gaNcclInitFromMPI(void);

/// Communicator of `nranks` ranks from a unique id that one process made
/// with gaNcclUniqueId and the others received by any means (`id`:
/// gaNcclUniqueIdBytes() bytes), on GPU `device` modulo the number of GPUs.
int32_t gaNcclInitWithId(const void *id, int32_t rank, int32_t nranks,
                         int32_t device);

/// Writes a new unique id (gaNcclUniqueIdBytes() bytes) to `out`.
int32_t gaNcclUniqueId(void *out);

/// The size of a unique id in bytes (NCCL's ncclUniqueId).
int64_t gaNcclUniqueIdBytes(void);

/// Communicator from the environment, for launchers without MPI:
/// GA_NCCL_ID (the unique id as 256 hex digits, from gaNcclUniqueIdHex on
/// one process), GA_NCCL_RANK, GA_NCCL_NRANKS, and optionally GA_NCCL_DEVICE.
int32_t gaNcclInitFromEnv(void);

/// Writes a new unique id as 256 hex digits and a NUL to `out` (257 bytes).
int32_t gaNcclUniqueIdHex(char *out);

/// In-place all-reduce of `count` elements at device address `buffer`,
/// enqueued on `stream` (a CUstream / cudaStream_t of the current device): the
/// call returns without waiting, and the reduced values are ready for the
/// work enqueued on `stream` after it. `dtype` and `op` are ncclDataType_t /
/// ncclRedOp_t values. A null `stream` is for callers without one (code that
/// is not stream-threaded): the runtime then waits for the device, reduces on
/// its own stream and waits for it, so the values are ready on return.
int32_t gaNcclAllReduce(void *stream, void *buffer, int64_t count,
                        int32_t dtype, int32_t op);

/// Reduce-scatter: `output` (`count` elements) receives this rank's part,
/// elements [rank * count, (rank + 1) * count), of the reduction of every
/// rank's `input` (`nranks * count` elements); `output` may be that part of
/// `input` (in place). Enqueued on `stream` as gaNcclAllReduce.
int32_t gaNcclReduceScatter(void *stream, const void *input, void *output,
                            int64_t count, int32_t dtype, int32_t op);

/// All-gather: `output` (`nranks * count` elements) receives every rank's
/// `input` (`count` elements) in rank order; `input` may be this rank's
/// part of `output` (in place). Enqueued on `stream` as gaNcclAllReduce.
int32_t gaNcclAllGather(void *stream, const void *input, void *output,
                        int64_t count, int32_t dtype);

/// Calls of gaNcclReduceScatter and gaNcclAllGather so far.
int64_t gaNcclShardedCalls(void);

/// The signatures of gaNcclReduceScatter and gaNcclAllGather, for
/// gaNcclForwardSharded.
typedef int32_t (*GANcclReduceScatterFn)(void *stream, const void *input,
                                         void *output, int64_t count,
                                         int32_t dtype, int32_t op);
typedef int32_t (*GANcclAllGatherFn)(void *stream, const void *input,
                                     void *output, int64_t count,
                                     int32_t dtype);

/// Forwards every later gaNcclReduceScatter and gaNcclAllGather to
/// `scatter` and `gather` (null: back to this runtime's communicator), as
/// gaNcclForwardAllReduce does for the all-reduce.
void gaNcclForwardSharded(GANcclReduceScatterFn scatter,
                          GANcclAllGatherFn gather);

/// Calls of gaNcclAllReduce so far (a counter for tests and benchmarks).
int64_t gaNcclAllReduceCalls(void);

/// The signature of gaNcclAllReduce, for gaNcclForwardAllReduce.
typedef int32_t (*GANcclAllReduceFn)(void *stream, void *buffer, int64_t count,
                                     int32_t dtype, int32_t op);

/// Forwards every later gaNcclAllReduce to `fn` (null: back to this
/// runtime's own communicator), with the same operands: the step's stream
/// included, so that `fn` enqueues the collective on it and returns without
/// waiting, as gaNcclAllReduce does. For host programs that own the
/// communicator themselves: the PyTorch frontend forwards a data-parallel
/// target="cuda" step's collectives to torch.distributed (its NCCL process
/// group). Still counted by gaNcclAllReduceCalls.
void gaNcclForwardAllReduce(GANcclAllReduceFn fn);

/// Destroys the communicator and the runtime's stream.
int32_t gaNcclFinalize(void);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // GA_RUNTIME_NCCL_GANCCLRUNTIME_H
