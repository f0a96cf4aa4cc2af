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
/// Waits for the collective `id`. Returns 0 on success.
typedef int32_t (*GAHostAllReduceWaitFn)(int64_t id);

static GAHostAllReduceStartFn startCallback;
static GAHostAllReduceWaitFn waitCallback;

/// Registers the callbacks (null pointers unregister them).
void gaHostCollectivesRegister(GAHostAllReduceStartFn start,
                               GAHostAllReduceWaitFn wait) {
  startCallback = start;
  waitCallback = wait;
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
