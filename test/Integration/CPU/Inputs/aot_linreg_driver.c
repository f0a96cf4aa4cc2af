/*===- aot_linreg_driver.c - call two AOT-compiled steps through C ---------===*
 *
 * Loads two shared libraries built from the same linear-regression step
 * (test/Integration/Inputs/steps/linreg_mean.mlir or dynamic_batch.mlir) with
 *   ga-opt step.mlir [--ga-accumulate=...] --ga-lower-to-cpu=c-interface=1 |
 *   mlir-translate --mlir-to-llvmir | llc -filetype=obj -relocation-model=pic
 *   clang -shared step.o -o step.so -lm
 * calls `_mlir_ciface_train_step` in both on the same inputs, prints the
 * results and exits 0 iff they agree to fp32 rounding.
 *
 * The C interface: every memref is a pointer to a descriptor
 * {allocated, aligned, offset, sizes[rank], strides[rank]}; scalars are passed
 * by value; several results come back through a struct pointed to by the
 * first argument. With `out-params` (the rewritten library built with
 * --ga-lower-to-cpu="out-params=1 ..."), results go instead to caller-owned
 * descriptors appended to the arguments; that step is called twice on the
 * same inputs, so state that a call leaves behind (static-temporaries=1)
 * would show up as a mismatch.
 *
 * usage: aot_linreg_driver ref.so rewritten.so FEATURES BATCH [out-params]
 *===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../Inputs/memref_descriptors.h"

/* Results of @train_step: new w, new b, loss. */
typedef struct {
  MemRef1D w;
  MemRef0D b;
  MemRef0D loss;
} Results;

typedef void (*StepFn)(Results *, MemRef1D *w, MemRef0D *b, float lr,
                       MemRef2D *x, MemRef1D *y);
typedef void (*OutParamsStepFn)(MemRef1D *w, MemRef0D *b, float lr, MemRef2D *x,
                                MemRef1D *y, MemRef1D *newW, MemRef0D *newB,
                                MemRef0D *loss);

static MemRef1D vec(float *p, int64_t n) {
  MemRef1D m = {p, p, 0, {n}, {1}};
  return m;
}

/* Deterministic inputs in [-1, 1). */
static float next(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

static void *load(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  void *fn = dlsym(lib, "_mlir_ciface_train_step");
  if (!fn) {
    fprintf(stderr, "%s has no _mlir_ciface_train_step\n", path);
    exit(2);
  }
  return fn;
}

/* Runs the step (`outParams`: the out-params ABI, `calls` times) on inputs
 * drawn from `seed`. */
static Results run(void *fn, int outParams, int calls, int64_t f, int64_t batch,
                   uint32_t seed) {
  float *w = malloc(f * sizeof(float)), *x = malloc(batch * f * sizeof(float)),
        *y = malloc(batch * sizeof(float)), b = 0.25f;
  for (int64_t i = 0; i < f; ++i)
    w[i] = next(&seed);
  for (int64_t i = 0; i < batch * f; ++i)
    x[i] = next(&seed);
  for (int64_t i = 0; i < batch; ++i)
    y[i] = next(&seed);
  MemRef1D mw = vec(w, f), my = vec(y, batch);
  MemRef0D mb = {&b, &b, 0};
  MemRef2D mx = {x, x, 0, {batch, f}, {f, 1}};
  Results r;
  if (outParams) {
    float *newW = malloc(f * sizeof(float)), *newB = malloc(sizeof(float)),
          *loss = malloc(sizeof(float));
    r.w = vec(newW, f);
    MemRef0D b0 = {newB, newB, 0}, l0 = {loss, loss, 0};
    r.b = b0;
    r.loss = l0;
    for (int i = 0; i < calls; ++i)
      ((OutParamsStepFn)fn)(&mw, &mb, 0.1f, &mx, &my, &r.w, &r.b, &r.loss);
  } else {
    ((StepFn)fn)(&r, &mw, &mb, 0.1f, &mx, &my);
  }
  free(w);
  free(x);
  free(y);
  return r;
}

int main(int argc, char **argv) {
  int outParams = argc == 6 && !strcmp(argv[5], "out-params");
  if (argc != 5 && !outParams) {
    fprintf(stderr,
            "usage: %s ref.so rewritten.so FEATURES BATCH [out-params]\n",
            argv[0]);
    return 2;
  }
  int64_t f = atoll(argv[3]), batch = atoll(argv[4]);
  Results ref = run(load(argv[1]), 0, 1, f, batch, 7u);
  Results got = run(load(argv[2]), outParams, 2, f, batch, 7u);
  if (ref.w.sizes[0] != f || got.w.sizes[0] != f) {
    fprintf(stderr, "unexpected result size\n");
    return 1;
  }
  double maxRef = 0, maxErr = 0;
  for (int64_t i = 0; i < f; ++i) {
    float r = ref.w.aligned[ref.w.offset + i * ref.w.strides[0]];
    float g = got.w.aligned[got.w.offset + i * got.w.strides[0]];
    maxRef = fmax(maxRef, fabs(r));
    maxErr = fmax(maxErr, fabs(r - g));
  }
  float rb = ref.b.aligned[ref.b.offset], gb = got.b.aligned[got.b.offset];
  float rl = ref.loss.aligned[ref.loss.offset];
  float gl = got.loss.aligned[got.loss.offset];
  printf("w[0] ref %.6f rewritten %.6f\n", ref.w.aligned[ref.w.offset],
         got.w.aligned[got.w.offset]);
  printf("b ref %.6f rewritten %.6f\n", rb, gb);
  printf("loss ref %.6f rewritten %.6f\n", rl, gl);
  int ok = maxErr <= 1e-5 * maxRef && fabs(rb - gb) <= 1e-5 * fabs(rb) &&
           fabs(rl - gl) <= 1e-5 * fabs(rl);
  printf("%s: max |dw| %.3g (max |w| %.3g)\n", ok ? "MATCH" : "MISMATCH",
         maxErr, maxRef);
  /* Results are owned by the caller: allocated with malloc by the step (or
   * by us, with out-params). */
  free(ref.w.allocated);
  free(got.w.allocated);
  free(ref.b.allocated);
  free(got.b.allocated);
  free(ref.loss.allocated);
  free(got.loss.allocated);
  return ok ? 0 : 1;
}
