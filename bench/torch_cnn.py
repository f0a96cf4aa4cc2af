#!/usr/bin/env python3
"""Convolutional networks: compile_train_step against PyTorch's own
gradient accumulation, eager and under torch.compile, and against the same
step built without ga-convolutions-to-products (another build directory).

For each model and N, one training step of a batch of B samples in N
micro-batches, timed in separate processes, interleaved rounds:

  ours:    ga_mlir.torch.compile_train_step(model, loss_fn, SGD,
           micro_batches=N) (CBLAS, 512-bit vectors, static temporaries):
           convolutions as im2col copies and cblas_sgemm calls
  before:  the same, compiled by the build given with --before-build (e.g.
           one without the convolution rewrite: convolutions as loops)
  eager:   for each micro-batch: loss_fn(model, x_i, y_i) * (B_i / B)
           .backward(); then optimizer.step(); optimizer.zero_grad()
  compile: the same loop with the model under torch.compile (Inductor)

Models (test/python/torch/model_zoo.py): "resnet18", torchvision's ResNet-18
with 16 channels in the stem, 64 x 64 images, 3 classes, BatchNorm frozen
(eval mode); "cnn", the two-convolution CNN of test/python/torch/zoo.py.
SGD with momentum (the zoo's "sgd"), 1 thread (torch.set_num_threads(1),
OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = 1).

usage: .venv/bin/python bench/torch_cnn.py [--ns 4] [--batch 16]
           [--models resnet18] [--before-build /path/to/build]
           [--rounds 3] [--reps 5]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

# Beside this script; it puts the build's python_packages on the path.
import torch_accumulation
from ga_mlir.steplib import time_calls

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "..", "test", "python", "torch")


# ----------------------------------------------------------------- models
def make(model_name, batch, seed=0):
    import torch
    sys.path.insert(0, ZOO)
    import model_zoo
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    if model_name == "resnet18":
        model = model_zoo.resnet18()
        data = model_zoo.images(g, batch, 64)
    elif model_name == "cnn":
        import zoo
        model = zoo.CNN()
        data = zoo.cnn_batch(g, batch)
    else:
        raise SystemExit(f"unknown model {model_name}")
    model.eval()  # BatchNorm frozen: running statistics
    return model, model_zoo.classification, data, model_zoo.OPTIMIZERS["sgd"]


# ----------------------------------------------------------------- workers
def worker(a):
    import torch
    torch.set_num_threads(1)
    model, loss_fn, batch, make_opt = make(a.model, a.batch)
    opt = make_opt(model.parameters())
    first = {}
    t0 = time.perf_counter()
    if a.worker in ("ours", "before"):
        sys.path.insert(0, os.path.join(os.environ["GA_BUILD_DIR"],
                                        "python_packages"))
        from ga_mlir.torch import compile_train_step
        step = compile_train_step(model, loss_fn, opt, example_inputs=batch,
                                  micro_batches=a.n, vector_width=512)

        def run():
            first.setdefault("loss", step(*batch).item())
    else:
        run = torch_accumulation.pytorch_accumulation(model, loss_fn, opt, batch, a.n,
                                   a.worker != "eager", first)
    run()  # compiles (ours, torch.compile)
    setup = time.perf_counter() - t0
    times = time_calls(run, a.warmup, a.reps)
    return {"times": times, "loss": first["loss"], "setup": setup}


def run_worker(build, cache, **kw):
    return torch_accumulation.run_worker(
        __file__, {"GA_BUILD_DIR": build, "GA_MLIR_CACHE_DIR": cache}, **kw)


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="resnet18")
    p.add_argument("--ns", default="4")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--build", default=os.environ.get(
        "GA_BUILD_DIR", os.path.join(HERE, "..", "build")))
    p.add_argument("--before-build", default=None)
    torch_accumulation.add_timing_arguments(p, reps=5)
    p.add_argument("--kinds", default="ours,before,eager,compile",
                   help="which of the four to time (the table needs ours, "
                   "eager and compile)")
    p.add_argument("--worker", choices=["ours", "before", "eager", "compile"])
    p.add_argument("--model", default="resnet18")
    p.add_argument("--n", type=int, default=4)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a)))
        return

    t0 = time.time()
    print("load average at start: %.2f %.2f %.2f on %d CPUs; 1 thread; B = %d"
          % (os.getloadavg() + (os.cpu_count(), a.batch)), flush=True)
    configs = [(m, int(n)) for m in a.models.split(",")
               for n in a.ns.split(",")]
    builds = {"ours": os.path.abspath(a.build)}
    if a.before_build:
        builds["before"] = os.path.abspath(a.before_build)
    kinds = [k for k in list(builds) + ["eager", "compile"]
             if k in a.kinds.split(",")]
    caches = {k: tempfile.mkdtemp(prefix=f"ga-bench-{k}-") for k in kinds}

    def run(model, n, kind):
        res = run_worker(builds.get(kind, builds["ours"]), caches[kind],
                         worker=kind, model=model, n=n, batch=a.batch,
                         reps=a.reps, warmup=a.warmup)
        print(f"  {model} N={n} {kind}: "
              f"{statistics.median(res['times']) * 1e3:.1f} ms "
              f"(first call {res['setup']:.0f} s)", flush=True)
        return res
    results = torch_accumulation.run_rounds(a, t0, configs, kinds, run)
    med = statistics.median
    if not {"ours", "eager", "compile"} <= set(kinds):
        return
    print("\n| model | N | " + " | ".join(f"{k} ms" for k in kinds)
          + " | ours/eager | ours/compile | "
          + ("before/ours | " if "before" in kinds else "")
          + "first call ours / compile (s) | loss ours / eager |")
    print("|" + " --- |" * (len(kinds) + 6 + ("before" in kinds)))
    rows = []
    for model, n in configs:
        t = {k: med(results[(model, n, k)]["times"]) for k in kinds}
        row = dict(model=model, n=n, batch=a.batch,
                   **{f"{k}_ms": t[k] * 1e3 for k in kinds},
                   loss={k: results[(model, n, k)]["loss"] for k in kinds},
                   setup={k: results[(model, n, k)]["setup"] for k in kinds})
        rows.append(row)
        cells = [f"{t[k] * 1e3:.1f}" for k in kinds]
        cells += [f"{t['ours'] / t['eager']:.2f}",
                  f"{t['ours'] / t['compile']:.2f}"]
        if "before" in kinds:
            cells.append(f"{t['before'] / t['ours']:.1f}")
        cells.append(f"{row['setup']['ours']:.0f} / "
                     f"{row['setup']['compile']:.0f}")
        cells.append(f"{row['loss']['ours']:.5f} / "
                     f"{row['loss']['eager']:.5f}")
        print(f"| {model} | {n} | " + " | ".join(cells) + " |")
    torch_accumulation.finish(a, t0, rows)


if __name__ == "__main__":
    main()
