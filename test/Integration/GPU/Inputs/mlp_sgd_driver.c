// Drives test/Integration/Inputs/steps/mlp_sgd.mlir compiled for the GPU
// (ga-compile --target=cuda, c-interface): seeded inputs to device memory, one
// call of the micro-batched step, results back to the host. With
// -DGA_DRIVER_COMPARE_CPU it also runs the original full-batch step compiled
// for the CPU (its C interface renamed to cpu_train_step) and compares.
// With -DGA_DRIVER_SELF_TEST "device" memory is host memory, so that the
// driver itself can be checked on a machine without a GPU (the step under
// test is then a CPU build of the mapped loops, see driver-self-test.test).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../Inputs/memref_descriptors.h"

#ifndef GA_DRIVER_SELF_TEST
#include "GACudaRuntime.h"
#endif

typedef struct {
  MemRef2D w1;
  MemRef1D b1;
  MemRef2D w2;
  MemRef1D b2;
  MemRef0D loss;
} Results;

typedef void StepFn(Results *, MemRef2D *, MemRef1D *, MemRef2D *, MemRef1D *,
                    float, MemRef2D *, MemRef1DI64 *);
StepFn _mlir_ciface_train_step;
#ifdef GA_DRIVER_COMPARE_CPU
StepFn cpu_train_step;
#endif

enum { B = 24, IN = 16, H = 32, C = 10 };

#ifdef GA_DRIVER_SELF_TEST
static void *dev_alloc(size_t n) { return malloc(n); }
static void to_dev(void *d, const void *h, size_t n) { memcpy(d, h, n); }
static void to_host(void *h, const void *d, size_t n) { memcpy(h, d, n); }
static void dev_free(void *p) { free(p); }
#else
static void *dev_alloc(size_t n) { return gaGpuAlloc(n); }
static void to_dev(void *d, const void *h, size_t n) {
  gaGpuCopyToDevice(d, h, n);
}
static void to_host(void *h, const void *d, size_t n) {
  gaGpuCopyToHost(h, d, n);
}
static void dev_free(void *p) { gaGpuFree(p); }
#endif

static uint64_t state = 0x9E3779B97F4A7C15ull;
static float uniform(void) { // [-1, 1)
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((state >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

static MemRef2D desc2(float *p, int64_t r, int64_t c) {
  MemRef2D d = {p, p, 0, {r, c}, {c, 1}};
  return d;
}
static MemRef1D desc1(float *p, int64_t n) {
  MemRef1D d = {p, p, 0, {n}, {1}};
  return d;
}

// Host inputs, and copies in "device" memory for the step under test.
static float w1[IN * H], b1[H], w2[H * C], b2[C], x[B * IN];
static int64_t labels[B];

static float *upload(const void *h, size_t n) {
  float *d = dev_alloc(n);
  to_dev(d, h, n);
  return d;
}

/// Runs `step` on copies of the inputs in `device` memory (or host memory)
/// and copies its results to `out` (w1, b1, w2, b2, loss back to back).
static void run(StepFn *step, int device, float *out) {
  void *(*alloc)(size_t) = device ? dev_alloc : malloc;
  float *a[5];
  size_t n[5] = {sizeof w1, sizeof b1, sizeof w2, sizeof b2, sizeof x};
  const void *h[5] = {w1, b1, w2, b2, x};
  for (int i = 0; i < 5; ++i) {
    a[i] = alloc(n[i]);
    if (device)
      to_dev(a[i], h[i], n[i]);
    else
      memcpy(a[i], h[i], n[i]);
  }
  int64_t *l = alloc(sizeof labels);
  if (device)
    to_dev(l, labels, sizeof labels);
  else
    memcpy(l, labels, sizeof labels);
  MemRef2D dw1 = desc2(a[0], IN, H), dw2 = desc2(a[2], H, C),
           dx = desc2(a[4], B, IN);
  MemRef1D db1 = desc1(a[1], H), db2 = desc1(a[3], C);
  MemRef1DI64 dl = {l, l, 0, {B}, {1}};
  Results r;
  step(&r, &dw1, &db1, &dw2, &db2, 0.1f, &dx, &dl);
  void (*get)(void *, const void *, size_t) =
      device ? to_host : (void (*)(void *, const void *, size_t))memcpy;
  get(out, r.w1.aligned + r.w1.offset, sizeof w1);
  get(out + IN * H, r.b1.aligned + r.b1.offset, sizeof b1);
  get(out + IN * H + H, r.w2.aligned + r.w2.offset, sizeof w2);
  get(out + IN * H + H + H * C, r.b2.aligned + r.b2.offset, sizeof b2);
  get(out + IN * H + H + H * C + C, r.loss.aligned + r.loss.offset,
      sizeof(float));
  void (*release)(void *) = device ? dev_free : free;
  release(r.w1.allocated);
  release(r.b1.allocated);
  release(r.w2.allocated);
  release(r.b2.allocated);
  release(r.loss.allocated);
  for (int i = 0; i < 5; ++i)
    release(a[i]);
  release(l);
}

int main(void) {
  for (int i = 0; i < IN * H; ++i)
    w1[i] = 0.25f * uniform();
  for (int i = 0; i < H; ++i)
    b1[i] = 0.1f * uniform();
  for (int i = 0; i < H * C; ++i)
    w2[i] = 0.25f * uniform();
  for (int i = 0; i < C; ++i)
    b2[i] = 0.1f * uniform();
  for (int i = 0; i < B * IN; ++i)
    x[i] = uniform();
  for (int i = 0; i < B; ++i)
    labels[i] = (int64_t)((uniform() + 1.0f) * 5.0f) % C;

  enum { N = IN * H + H + H * C + C + 1 };
  static float got[N], want[N];
  run(_mlir_ciface_train_step, 1, got);
  printf("loss: %.6f\n", got[N - 1]);
#if defined(GA_DRIVER_COMPARE_CPU)
  run(cpu_train_step, 0, want);
  double maxRef = 0, maxErr = 0;
  for (int i = 0; i < N; ++i) {
    maxRef = fmax(maxRef, fabs(want[i]));
    maxErr = fmax(maxErr, fabs((double)got[i] - want[i]));
  }
  int ok = maxErr <= 1e-5 * maxRef;
  printf("max |gpu - cpu| = %.3e (max |cpu| = %.3e): %s\n", maxErr, maxRef,
         ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
#else
  (void)want;
  return 0;
#endif
}
