#!/usr/bin/env python3
"""How much of a compiled CPU step's time is its CBLAS provider's: one
step of bench/remat_budget.py's models, compiled once, timed with its
matrix products on each provider in turn, interleaved round by round in
one process (issue #42: on an Intel Xeon, torch.compile's step, whose
products run on the MKL that torch bundles, is faster than ours at equal
peak; on an AMD EPYC it is slower).

A small interposer, built here with cc into a temporary directory and
preloaded, defines cblas_sgemm, so the step library binds its products to
it, and forwards each call to the provider selected at run time:
- "openblas": the step's own, libopenblas.so.0 (python/ga_mlir/_blas.py);
- "mkl": the Fortran sgemm_ of torch's libtorch_cpu.so (the MKL that
  torch.compile's products run on), row-major as the transposed problem;
- "onednn": dnnl_sgemm of --onednn (a libdnnl.so.3, e.g. unpacked from
  PyPI's onednn-cpu-gomp wheel), when given.

Each provider's measured peak (the heap counter, preloaded too) is
reported beside the step's own report: OpenBLAS allocates nothing per call
(test/python/host-blas.py), so its peak is the report's; a provider that
mallocs per call shows by how much it would exceed a budget that the
report holds. Round r calls the step once per provider to warm it and
times the next call; a provider's speed-up is the median over rounds of
OpenBLAS's time over its own (with quartiles), so that a load that comes
and goes weighs on all alike. One thread everywhere.

usage: .venv/bin/python bench/blas_providers.py [--model llama] [--n 16]
           [--recompute pointwise] [--reps 12] [--onednn PATH/libdnnl.so.3]
           [--json out.json]
       .venv/bin/python bench/blas_providers.py --self-test
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import remat_budget as rb  # noqa: E402

PROVIDERS = ("openblas", "mkl", "onednn")
SHIM_SOURCE = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef void (*cblas_t)(int, int, int, int, int, int, float, const float *,
                        int, const float *, int, float, float *, int);
typedef void (*f77_t)(const char *, const char *, const int *, const int *,
                      const int *, const float *, const float *, const int *,
                      const float *, const int *, const float *, float *,
                      const int *);
typedef int (*dnnl_t)(char, char, long, long, long, float, const float *,
                      long, const float *, long, float, float *, long);
static int provider;
static cblas_t openblas;
static f77_t mkl;
static dnnl_t onednn;

static void *symbol(const char *env, const char *name) {
  const char *path = getenv(env);
  void *library = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  void *f = library ? dlsym(library, name) : NULL;
  if (!f) {
    fprintf(stderr, "blas_providers: no %s in %s\n", name, path ? path : env);
    abort();
  }
  return f;
}

/* 0: OpenBLAS, 1: MKL (torch's), 2: oneDNN; loads the provider first. */
void ga_blas_select(int p) {
  if (p == 0 && !openblas)
    openblas = (cblas_t)symbol("GA_BLAS_OPENBLAS", "cblas_sgemm");
  if (p == 1 && !mkl)
    mkl = (f77_t)symbol("GA_BLAS_MKL", "sgemm_");
  if (p == 2 && !onednn)
    onednn = (dnnl_t)symbol("GA_BLAS_ONEDNN", "dnnl_sgemm");
  provider = p;
}

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc) {
  char tra = ta == 112 ? 'T' : 'N', trb = tb == 112 ? 'T' : 'N';
  if (provider == 0 || order != 101) {
    if (!openblas)
      ga_blas_select(0);
    openblas(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (provider == 1) {
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
    mkl(&trb, &tra, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
  } else {
    onednn(tra, trb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}
"""


def build_shim(directory):
    """Compiles the interposer into `directory`; returns its path."""
    source = os.path.join(directory, "ga_blas_providers.c")
    library = os.path.join(directory, "libga_blas_providers.so")
    with open(source, "w") as f:
        f.write(SHIM_SOURCE)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC",
                    source, "-o", library, "-ldl"], check=True)
    return library


def provider_env(onednn):
    """The environment that tells the interposer where each provider is."""
    import torch
    env = {"GA_BLAS_OPENBLAS": "libopenblas.so.0",
           "GA_BLAS_MKL": os.path.join(os.path.dirname(torch.__file__),
                                       "lib", "libtorch_cpu.so")}
    if onednn:
        env["GA_BLAS_ONEDNN"] = os.path.abspath(onednn)
    return env


def self_test():
    """The interposer against numpy in float64, for each provider it can
    load and each transposition: forwarding, not the step, is tested."""
    import numpy as np
    from ga_mlir import _blas
    _blas.load_host_blas()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(provider_env(None))
        shim = ctypes.CDLL(build_shim(tmp))
        rng = np.random.default_rng(0)
        m, n, k = 37, 29, 23
        f = ctypes.POINTER(ctypes.c_float)
        for p in (0, 1):
            shim.ga_blas_select(p)
            for ta in (111, 112):
                for tb in (111, 112):
                    a = rng.standard_normal((k, m) if ta == 112 else (m, k))
                    b = rng.standard_normal((n, k) if tb == 112 else (k, n))
                    c = rng.standard_normal((m, n))
                    a32, b32, c32 = (np.ascontiguousarray(x, np.float32)
                                     for x in (a, b, c))
                    shim.cblas_sgemm(
                        101, ta, tb, m, n, k, ctypes.c_float(0.5),
                        a32.ctypes.data_as(f), a32.shape[1],
                        b32.ctypes.data_as(f), b32.shape[1],
                        ctypes.c_float(2.0), c32.ctypes.data_as(f), n)
                    want = 0.5 * ((a.T if ta == 112 else a) @
                                  (b.T if tb == 112 else b)) + 2.0 * c
                    error = np.abs(c32 - want).max() / np.abs(want).max()
                    assert error < 1e-5, (PROVIDERS[p], ta, tb, error)
    print("blas_providers self-test: OK (openblas, mkl; 4 transpositions)")


def worker(a):
    """In the preloaded process: compile the step, measure each provider's
    peak, then time them round by round."""
    import torch
    from ga_mlir import steplib
    from ga_mlir.torch import compile_train_step
    torch.set_num_threads(1)
    shim = ctypes.CDLL(None)
    providers = [p for p in PROVIDERS if p != "onednn" or a.onednn]
    model, loss_fn, optimizer, batch = rb.make(a.model, "full")
    step = compile_train_step(model, loss_fn, optimizer, example_inputs=batch,
                              share_buffers=True, micro_batches=a.n,
                              recompute=a.recompute)
    step(*batch)
    report = step.memory_report()["total_peak"]
    held = rb._held_bytes(model, optimizer, batch)
    counter = steplib.HeapCounter()
    peaks, times = {}, {p: [] for p in providers}
    for p in providers:
        shim.ga_blas_select(PROVIDERS.index(p))
        step(*batch)  # the provider's first call (its own set-up) apart
        peaks[p] = counter.step_peak(step, lambda: step(*batch), held)[1]
    for _ in range(a.reps):
        for p in providers:
            shim.ga_blas_select(PROVIDERS.index(p))
            times[p] += steplib.time_calls(lambda: step(*batch), 1, 1)
    rows = []
    for p in providers:
        ratios = sorted(x / y for x, y in zip(times["openblas"], times[p]))
        q = statistics.quantiles(ratios, n=4)
        rows.append(dict(provider=p, ms=statistics.median(times[p]) * 1e3,
                         speedup=statistics.median(ratios), quartiles=q,
                         measured_peak=peaks[p], report=report))
    return {"model": a.model, "n": a.n, "recompute": a.recompute,
            "cpu": platform.processor() or platform.machine(),
            "rows": rows}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="llama", choices=["llama", "gpt2"])
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--recompute", default="pointwise")
    p.add_argument("--reps", type=int, default=12)
    p.add_argument("--onednn", default=None)
    p.add_argument("--json", default=None)
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--worker", default=None, choices=["providers"],
                   help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.self_test:
        return self_test()
    if a.worker:
        print(json.dumps(worker(a)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        result = rb.run_worker(
            __file__, preload=[build_shim(tmp)],
            extra_env=provider_env(a.onednn), worker="providers",
            model=a.model, n=a.n, recompute=a.recompute, reps=a.reps,
            onednn=a.onednn and os.path.abspath(a.onednn))
    if "error" in result:
        sys.exit(f"blas_providers: {result['error']}")
    print(f"{a.model}, N = {a.n}, recompute {a.recompute}; median of "
          f"{a.reps} interleaved rounds, one thread")
    print("| provider | ms/step | speed-up over OpenBLAS (quartiles) | "
          "measured peak | over the report |")
    print("|---|---|---|---|---|")
    for r in result["rows"]:
        q = r["quartiles"]
        print(f"| {r['provider']} | {r['ms']:.1f} | {r['speedup']:.3f}x "
              f"({q[0]:.3f}-{q[2]:.3f}) | {r['measured_peak']:,} | "
              f"{r['measured_peak'] - r['report']:+,} B |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
