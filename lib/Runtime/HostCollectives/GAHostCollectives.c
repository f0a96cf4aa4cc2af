/*===- GAHostCollectives.c - collectives forwarded to callbacks -----------===*\
|*                                                                            *|
|* The run-time side of --convert-ga-to-host-collectives. A compiled step     *|
|* calls gaHostAllReduceStart on each bucket right after the micro-batch loop *|
|* and gaHostAllReduceWait before the first op that reads it; both forward to *|
|* callbacks registered by the host program (the PyTorch frontend launches    *|
|* torch.distributed.all_reduce(..., async_op=True) on a view of the buffer   *|
|* and waits on the returned work). One set of callbacks per process: the     *|
|* program registers them before each call of a step (steps of different      *|
|* process groups may alternate).                                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>

/// Launches the all-reduce `op` (0 sum, 1 mean, 2 max, 3 min) of `count`
/// elements of type `dtype` (0 f32, 1 f64, 2 f16, 3 bf16, 4 i8, 5 i16,
/// 6 i32, 7 i64) in place at `buffer`; `id` numbers the collectives of one
/// call of the step. Returns 0 on success.
typedef int32_t (*GAHostAllReduceStartFn)(void *buffer, int64_t count,
                                          int32_t dtype, int32_t op,
                                          int64_t id);
/// Launches the sharded collective `kind` (0 reduce-scatter with `op`, 1
/// all-gather) on `count` elements at `buffer`, a tensor of `rows` rows:
/// rank r of R holds rows [r rows / R, (r + 1) rows / R). The reduce-scatter
/// leaves this rank's rows reduced (the others are undefined), the
/// all-gather fills in the other ranks' rows. Returns 0 on success.
typedef int32_t (*GAHostShardedStartFn)(void *buffer, int64_t count,
                                        int32_t dtype, int32_t op, int64_t id,
                                        int32_t kind, int64_t rows);
/// Waits for the collective `id`. Returns 0 on success.
typedef int32_t (*GAHostAllReduceWaitFn)(int64_t id);

static GAHostAllReduceStartFn startCallback;
static GAHostAllReduceWaitFn waitCallback;
static GAHostShardedStartFn shardedCallback;

/// Registers the callbacks (null pointers unregister them).
void gaHostCollectivesRegister(GAHostAllReduceStartFn start,
                               GAHostAllReduceWaitFn wait) {
  startCallback = start;
  waitCallback = wait;
}

/// Registers the callback of the sharded collectives (ZeRO-1; null
/// unregisters it). Their waits are gaHostAllReduceWait's.
void gaHostCollectivesRegisterSharded(GAHostShardedStartFn start) {
  shardedCallback = start;
}

int32_t gaHostShardedStart(void *buffer, int64_t count, int32_t dtype,
                           int32_t op, int64_t id, int32_t kind, int64_t rows) {
  if (!shardedCallback) {
    fprintf(stderr, "ga: gaHostShardedStart: no collective callback is "
                    "registered (gaHostCollectivesRegisterSharded)\n");
    return 1;
  }
  return shardedCallback(buffer, count, dtype, op, id, kind, rows);
}

int32_t gaHostAllReduceStart(void *buffer, int64_t count, int32_t dtype,
                             int32_t op, int64_t id) {
  if (!startCallback) {
    fprintf(stderr, "ga: gaHostAllReduceStart: no collective callback is "
                    "registered (gaHostCollectivesRegister)\n");
    return 1;
  }
  return startCallback(buffer, count, dtype, op, id);
}

int32_t gaHostAllReduceWait(int64_t id) {
  if (!waitCallback) {
    fprintf(stderr, "ga: gaHostAllReduceWait: no collective callback is "
                    "registered (gaHostCollectivesRegister)\n");
    return 1;
  }
  return waitCallback(id);
}
