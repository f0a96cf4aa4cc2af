#!/usr/bin/env python3
"""First-call compile time of compile_train_step on the zoo's recurrent
models and one transformer, split into its phases.

Each model runs in a fresh process with an empty ga-mlir cache: the first
call of ga_mlir.torch.compile_train_step (SGD with momentum, N micro-batches,
the zoo's options) is timed in whole and split into
  pipeline: ga-mlir's passes (every ga_mlir.driver.compile call: the
            rewrite, the lowering, the memory report),
  C:        ga-compile (mlir-translate, llc, the link),
  CPU:      user + system seconds of the process and its children over the
            first call (less sensitive to a loaded machine than the wall
            time of the other columns),
  trace:    the rest (torch.func / make_fx tracing, torch-mlir's import,
            the first run of the step).
With --torch-compile, the first call of PyTorch's accumulation loop with the
model under torch.compile is timed the same way (Inductor's caches off).

Models: the zoo's (test/python/torch/model_zoo.py) lstm-h_n (2-layer LSTM),
gru-bidirectional, distilbert, any other zoo name, and lstm-1layer (defined
here: the zoo's LSTM classifier with one layer).

usage: .venv/bin/python bench/recurrent_compile_time.py [--models lstm-1layer,...]
           [--n 4] [--batch 6] [--size small|medium] [--torch-compile]
           [--build build]
Figures depend on the machine and its load (printed); they are never
asserted by a test (docs/Results.md keeps the measured ones).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "test", "python", "torch"))

DEFAULT_MODELS = "lstm-1layer,lstm-h_n,gru-bidirectional,distilbert"


def _case(name, size="small"):
    import torch
    import model_zoo
    if name != "lstm-1layer":
        return (model_zoo.MEDIUM if size == "medium" else model_zoo.MODELS)[name]

    class LSTMOneLayer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.LSTM(4, 8, num_layers=1, batch_first=True)
            self.fc = torch.nn.Linear(8, 3)

        def forward(self, x):
            _, (h_n, _) = self.rnn(x)
            return self.fc(h_n[-1])
    return model_zoo.Case(LSTMOneLayer, model_zoo.sequences,
                          model_zoo.classification)


def _cpu_seconds():
    """User + system time of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + children.ru_utime
            + children.ru_stime)


def _timed_calls(module, name, phases, key):
    """Wraps module.name so that its time adds up in phases[key]."""
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            phases[key] += time.perf_counter() - start
    setattr(module, name, wrapper)


def worker(a):
    import torch
    import model_zoo
    model_zoo.quiet()
    torch.set_num_threads(1)
    case = _case(a.model, a.size)
    torch.manual_seed(0)
    model = case.make_model().train()
    data = case.make_batch(torch.Generator().manual_seed(1), a.batch)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    phases = {"pipeline": 0.0, "C": 0.0}
    if a.kind == "compile":
        fwd = torch.compile(model)
        chunks = list(zip(*(t.tensor_split(a.n) for t in data)))
        start = time.perf_counter()
        for chunk in chunks:
            (case.loss_fn(fwd, *chunk) * (chunk[0].shape[0] / a.batch)
             ).backward()
        opt.step()
        return {"first_call": time.perf_counter() - start}
    from ga_mlir import driver
    from ga_mlir.torch import _step, compile_train_step
    # The compiler runs in process, in one driver call per library.
    _timed_calls(driver, "compile", phases, "pipeline")
    _timed_calls(_step, "_aot", phases, "C")
    start, cpu = time.perf_counter(), _cpu_seconds()
    step = compile_train_step(model, case.loss_fn, opt, example_inputs=data,
                              micro_batches=a.n, **case.options)
    loss = step(*data)
    total = time.perf_counter() - start
    return {"first_call": total, "cpu": _cpu_seconds() - cpu,
            "loss": float(loss), **phases,
            "trace": total - phases["pipeline"] - phases["C"]}


def run_worker(a, model, kind):
    with tempfile.TemporaryDirectory(prefix="ga-compile-time-") as cache:
        env = dict(os.environ, GA_MLIR_CACHE_DIR=cache, OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"))
        if a.build and os.path.isdir(a.build):
            env["GA_BUILD_DIR"] = os.path.abspath(a.build)
            env["GA_CAPI_LIBRARY"] = os.path.join(env["GA_BUILD_DIR"], "lib",
                                                  "libGACAPI.so")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker",
               "--model", model, "--kind", kind, "--n", str(a.n),
               "--batch", str(a.batch), "--size", a.size]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        return {"error": (lines[-1] if lines else "failed").strip()[:120]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--n", type=int, default=4)
    p.add_argument("--batch", type=int, default=6)
    p.add_argument("--size", choices=["small", "medium"], default="small",
                   help="the zoo's configurations (medium: model_zoo.MEDIUM, "
                   "those of bench/zoo_speed.py --size medium)")
    p.add_argument("--torch-compile", action="store_true")
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="the build whose library is timed (GA_BUILD_DIR; "
                   "default: build/ of this checkout)")
    p.add_argument("--worker", action="store_true")
    p.add_argument("--model")
    p.add_argument("--kind", choices=["ours", "compile"], default="ours")
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a)))
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs; N = {a.n}, B = {a.batch}, {a.size} "
          "models, 1 thread")
    print("| model | first call s | CPU s | pipeline s | C s | trace s |"
          + (" torch.compile s |" if a.torch_compile else ""))
    print("| --- | --- | --- | --- | --- | --- |"
          + (" --- |" if a.torch_compile else ""))
    for model in a.models.split(","):
        r = run_worker(a, model, "ours")
        if "error" in r:
            row = f"| {model} | error: {r['error']} | | | | |"
        else:
            row = (f"| {model} | {r['first_call']:.1f} | {r['cpu']:.1f} "
                   f"| {r['pipeline']:.1f} "
                   f"| {r['C']:.1f} | {r['trace']:.1f} |")
        if a.torch_compile:
            c = run_worker(a, model, "compile")
            row += (f" {c['first_call']:.1f} |" if "error" not in c
                    else f" error: {c['error']} |")
        print(row, flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
