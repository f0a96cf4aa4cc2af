#!/usr/bin/env python3
"""Per-call overhead of a compiled step: the Python around the library.

For each zoo model (test/python/torch/model_zoo.py) and optimizer, compiles
the step (N micro-batches, the zoo's options), calls it a few times, then
times calls in interleaved rounds: the whole call of the step, and the
library's own entry point inside it (the ctypes call, timed by wrapping it).
The overhead is the difference: what the frontend adds per call (checking
that nothing the step depends on changed, laying out the arguments, the
hyper-parameters, the optimizer's step counters, the loss).

usage: PYTHONPATH=build/python_packages .venv/bin/python bench/call_overhead.py
           [--models bert-dropout,distilbert,gpt2,resnet18]
           [--optimizers sgd,adamw] [--n 4] [--batch 8] [--calls 50]
           [--rounds 5] [--profile]
--profile prints cProfile's top functions over the timed calls of each row.
Figures depend on the machine and its load (printed); docs/Results.md keeps the
measured ones, no test asserts them.
"""
import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "test", "python", "torch"))
sys.path.append(os.path.join(os.environ.get(
    "GA_BUILD_DIR", os.path.join(ROOT, "build")), "python_packages"))

DEFAULT_MODELS = "bert-dropout,distilbert,gpt2,resnet18"


class _LibraryClock:
    """Wraps the packed entry point of every library loaded from now on:
    the nanoseconds spent inside it add up in `ns`."""

    def __init__(self):
        from ga_mlir import _entry
        self.ns = 0
        inner = _entry.packed_entry_point

        def wrapped(*args, **kwargs):
            fn = inner(*args, **kwargs)

            def timed(address):
                start = time.perf_counter_ns()
                fn(address)
                self.ns += time.perf_counter_ns() - start
            return timed
        # _call imported the name: patch it where it is looked up.
        from ga_mlir.torch import _call
        _call.packed_entry_point = wrapped


def _optimizer(name, model):
    import torch
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)


def measure(model_name, opt_name, a, clock):
    import torch
    import model_zoo
    from ga_mlir.torch import compile_train_step
    case = model_zoo.MODELS[model_name]
    torch.manual_seed(0)
    model = case.make_model().train()
    data = case.make_batch(torch.Generator().manual_seed(1), a.batch)
    opt = _optimizer(opt_name, model)
    step = compile_train_step(model, case.loss_fn, opt, example_inputs=data,
                              micro_batches=a.n, **case.options)
    for _ in range(3):
        step(*data)
    totals, libs = [], []
    profile = cProfile.Profile() if a.profile else None
    for _ in range(a.rounds):
        clock.ns = 0
        if profile:
            profile.enable()
        start = time.perf_counter_ns()
        for _ in range(a.calls):
            step(*data)
        total = time.perf_counter_ns() - start
        if profile:
            profile.disable()
        totals.append(total / a.calls)
        libs.append(clock.ns / a.calls)
    overhead = statistics.median(t - lib for t, lib in zip(totals, libs))
    tensors = sum(1 for _ in model.parameters())
    print(f"| {model_name} | {opt_name} | {tensors} | "
          f"{statistics.median(totals) / 1e3:.0f} | "
          f"{statistics.median(libs) / 1e3:.0f} | {overhead / 1e3:.0f} |",
          flush=True)
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--optimizers", default="sgd,adamw")
    p.add_argument("--n", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--profile", action="store_true")
    a = p.parse_args()
    import torch
    import model_zoo
    torch.set_num_threads(1)
    model_zoo.quiet()
    clock = _LibraryClock()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} CPUs; N = {a.n}, B = {a.batch}, 1 thread, "
          f"median of {a.rounds} rounds of {a.calls} calls")
    print("| model | optimizer | parameter tensors | call us | library us "
          "| overhead us |")
    print("| --- | --- | --- | --- | --- | --- |")
    for model_name in a.models.split(","):
        for opt_name in a.optimizers.split(","):
            measure(model_name, opt_name, a, clock)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
