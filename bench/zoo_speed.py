#!/usr/bin/env python3
"""Step time of the model zoo (test/python/torch/model_zoo.py: the models,
batches and losses of the frontend's zoo tests) against PyTorch's own
gradient accumulation, and first-call compile times.

For each model, N and thread count, one process trains three copies of the
model on the same batch of B samples in N micro-batches, timed in
interleaved rounds (ours, eager, compile, ours, ...):

  ours:    ga_mlir.torch.compile_train_step(model, loss_fn, SGD, micro_batches=N,
           **the zoo's options) (2 threads: openmp=True, num_threads=2)
  eager:   for each micro-batch: loss_fn(model, *chunk) * (B_i / B)
           .backward(); then optimizer.step(); optimizer.zero_grad()
  compile: the same loop with the model under torch.compile (Inductor); the
           optimizer step stays eager

Compile: the first call (tracing and compiling included) of ours and of
torch.compile at N = 4, 1 thread, each in a fresh process with empty caches
(GA_MLIR_CACHE_DIR a new folder; TORCHINDUCTOR_FORCE_DISABLE_CACHES=1).
Other processes share ga-mlir's cache folder of this run (--cache).

The default run is short (three models, N = 4, 1 thread); the full table:
    --models all --ns 1,4,16 --threads 1,2
--write appends the table to docs/Results.md under a dated heading. Figures
depend on the machine and its load: the header says which and how loaded.

usage: PYTHONPATH=build/python_packages .venv/bin/python bench/zoo_speed.py
           [--models gpt2,distilbert,lstm-h_n] [--ns 4] [--threads 1]
           [--size small|medium] [--ours-options k=v,...]
           [--batch 16] [--rounds 3] [--min-time 0.2] [--no-compile-time]
           [--write docs/Results.md]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "test", "python", "torch"))
sys.path.append(os.path.join(os.environ.get(
    "GA_BUILD_DIR", os.path.join(ROOT, "build")), "python_packages"))

KINDS = ("ours", "eager", "compile")
DEFAULT_MODELS = "gpt2,distilbert,lstm-h_n"


def _optimizer(model):
    import torch
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def _cases(size):
    """The zoo's cases at `size`: "small" (the zoo's tests) or "medium"."""
    import model_zoo
    return model_zoo.MEDIUM if size == "medium" else model_zoo.MODELS


def _make(name, batch, size="small"):
    import torch
    import model_zoo
    model_zoo.quiet()
    case = _cases(size)[name]
    torch.manual_seed(0)
    model = case.make_model().train()
    data = case.make_batch(torch.Generator().manual_seed(1), batch)
    return case, model, data


def _ours_options(text):
    """`--ours-options key=value,...` as compile_train_step's keywords
    (true/false as bools, digits as ints)."""
    options = {}
    for item in filter(None, (text or "").split(",")):
        key, _, value = item.partition("=")
        options[key] = {"true": True, "false": False}.get(
            value.lower(), int(value) if value.isdigit() else value)
    return options


def _ours(case, model, data, n, threads, extra=None):
    from ga_mlir.torch import compile_train_step
    options = dict(case.options, **(extra or {}))
    if threads > 1:
        options.update(openmp=True, num_threads=threads)
    step = compile_train_step(model, case.loss_fn, _optimizer(model),
                              example_inputs=data, micro_batches=n, **options)
    return lambda: step(*data)


def _pytorch(case, model, data, n, compiled):
    import torch
    fwd = torch.compile(model) if compiled else model
    opt = _optimizer(model)
    b = data[0].shape[0]
    chunks = list(zip(*(t.tensor_split(n) for t in data)))

    def run():
        for chunk in chunks:
            loss = case.loss_fn(fwd, *chunk) * (chunk[0].shape[0] / b)
            loss.backward()
        opt.step()
        opt.zero_grad()
    return run


def _runner(kind, case, model, data, n, threads, extra=None):
    if kind == "ours":
        return _ours(case, model, data, n, threads, extra)
    return _pytorch(case, model, data, n, kind == "compile")


def _timed(run, min_time):
    """Seconds per call: calls repeated until `min_time` has passed."""
    calls, start = 0, time.perf_counter()
    while True:
        run()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls


def worker(a):
    import torch
    torch.set_num_threads(a.threads)
    if a.first_call:
        # One kind, cold caches: the first call, tracing and compiling
        # included.
        case, model, data = _make(a.model, a.batch, a.size)
        start = time.perf_counter()
        _runner(a.first_call, case, model, data, a.n, a.threads,
                _ours_options(a.ours_options))()
        return {"first_call": time.perf_counter() - start}
    runs = {}
    for kind in KINDS:
        case, model, data = _make(a.model, a.batch, a.size)
        runs[kind] = _runner(kind, case, model, data, a.n, a.threads,
                             _ours_options(a.ours_options))
        runs[kind]()  # compiles, or loads the library from the cache
        runs[kind]()
    times = {kind: [] for kind in KINDS}
    for _ in range(a.rounds):
        for kind in KINDS:
            times[kind].append(_timed(runs[kind], a.min_time))
    return {kind: statistics.median(t) for kind, t in times.items()}


def run_worker(a, env_extra=None, **kw):
    threads = kw.get("threads", 1)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), **(env_extra or {}))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker",
           "--batch", str(a.batch), "--size", a.size,
           "--ours-options", a.ours_options,
           "--rounds", str(a.rounds),
           "--min-time", str(a.min_time)]
    for k, v in kw.items():
        cmd += ["--" + k.replace("_", "-"), str(v)]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        error = next((line for line in lines if "error" in line.lower()),
                     lines[-1] if lines else "failed")
        return {"error": error.strip()[:120]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt(seconds):
    return f"{seconds * 1e3:.3g}"


def table(rows, compile_rows):
    lines = ["| model | N | threads | ours ms | eager ms | torch.compile ms "
             "| ours / eager | ours / torch.compile |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (model, n, threads), r in rows.items():
        if "error" in r:
            lines.append(f"| {model} | {n} | {threads} | failed: "
                         f"{r['error']} | | | | |")
            continue
        lines.append(
            f"| {model} | {n} | {threads} | {_fmt(r['ours'])} | "
            f"{_fmt(r['eager'])} | {_fmt(r['compile'])} | "
            f"{r['ours'] / r['eager']:.2f} | "
            f"{r['ours'] / r['compile']:.2f} |")
    if compile_rows:
        lines += ["", "| model | first call, ours (s) | first call, "
                  "torch.compile (s) | ours / torch.compile |",
                  "| --- | --- | --- | --- |"]
        for model, r in compile_rows.items():
            o, c = r["ours"], r["compile"]
            if "error" in o or "error" in c:
                lines.append(f"| {model} | {o.get('error', '')} | "
                             f"{c.get('error', '')} | |")
                continue
            lines.append(f"| {model} | {o['first_call']:.1f} | "
                         f"{c['first_call']:.1f} | "
                         f"{o['first_call'] / c['first_call']:.2f} |")
    return "\n".join(lines)


def write_docs(path, text, header):
    today = datetime.date.today().isoformat()
    with open(path, "a") as f:
        f.write(f"\n### The zoo's step times, {today} (bench/zoo_speed.py)"
                f"\n\n{header}\n\n{text}\n")


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help="comma-separated zoo names, or 'all'")
    p.add_argument("--ns", default="4")
    p.add_argument("--threads", default="1")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--ours-options", default="",
                   help="more compile_train_step options of ours, e.g. "
                   "split_row_reductions=false,approximate_math=false")
    p.add_argument("--size", choices=["small", "medium"], default="small",
                   help="the zoo's sizes (small: its tests' configurations; "
                   "medium: model_zoo.MEDIUM, hidden size 128)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.2,
                   help="seconds of calls per timing")
    p.add_argument("--no-compile-time", action="store_true")
    p.add_argument("--cache", default=None,
                   help="ga-mlir's cache folder (default: a new one)")
    p.add_argument("--write", default=None, metavar="Results.md")
    # One process's part.
    p.add_argument("--worker", action="store_true")
    p.add_argument("--model")
    p.add_argument("--n", type=int, default=4)
    p.add_argument("--first-call", choices=["ours", "compile"])
    a = p.parse_args()
    if a.worker:
        a.threads = int(a.threads)
        print(json.dumps(worker(a)))
        return

    models = list(_cases(a.size)) if a.models == "all" else \
        a.models.split(",")
    ns = [int(n) for n in a.ns.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    cache = a.cache or tempfile.mkdtemp(prefix="zoo-speed-")
    header = (f"{platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} CPUs, load average at start "
              f"{os.getloadavg()[0]:.1f}; {a.size} models, B = {a.batch}, "
              f"SGD with momentum; "
              + (f"ours with {a.ours_options}; " if a.ours_options else "")
              + f"median of {a.rounds} interleaved rounds")
    print(header, flush=True)
    t0 = time.time()
    rows, compile_rows = {}, {}
    for model in models:
        if not a.no_compile_time:
            compile_rows[model] = {
                kind: run_worker(
                    a, {"GA_MLIR_CACHE_DIR": tempfile.mkdtemp(
                        prefix="zoo-speed-cold-"),
                        "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"},
                    model=model, n=4, threads=1, first_call=kind)
                for kind in ("ours", "compile")}
            print(f"{model}: first calls {compile_rows[model]}", flush=True)
        for n in ns:
            for t in threads:
                rows[(model, n, t)] = run_worker(
                    a, {"GA_MLIR_CACHE_DIR": cache}, model=model, n=n,
                    threads=t)
                print(f"{model} N={n} threads={t}: {rows[(model, n, t)]} "
                      f"({time.time() - t0:.0f} s)", flush=True)
    text = table(rows, compile_rows)
    header += f"; load average at end {os.getloadavg()[0]:.1f}"
    print("\n" + header + "\n\n" + text)
    if a.write:
        write_docs(a.write, text, header)


if __name__ == "__main__":
    main()
