"""Compare gradient-accumulation settings on your own PyTorch model.

    python -m ga_mlir.train --model my_package.my_module:build \\
        [--arg batch=64 ...] [--n 1,4,16] [--steps 50] [--out ga-report]

`build(**args)` (the --arg values, as Python literals) returns
`(model, loss_fn, optimizer, batches)`: a torch.nn.Module, the loss of one
whole batch `loss_fn(model, *inputs)`, a torch.optim optimizer over the
model's parameters and an iterable of input tuples. The default model is
ga_mlir.torch.demo:digits_mlp (an MLP on scikit-learn's digits). The module
is imported from the current directory or sys.path (e.g. a file my_model.py:
`--model my_model:build`).

It runs ga_mlir.torch.compare: PyTorch's full-batch step and
compile_train_step with each N of --n, on copies of the same model and the
same batches, and prints per configuration the final loss, its largest
relative difference from PyTorch's, samples/s and the static and measured
peak memory of a step; OUT gets report.json, loss.png, throughput.png,
memory.png, compare.png and TensorBoard event files (OUT/tensorboard).

The heap is measured with libGAHeapCount.so, which the command preloads by
re-executing itself (--no-measure skips it). OPENBLAS_NUM_THREADS and
OMP_NUM_THREADS default to 1 then; torch runs on --threads threads
(default 1). With --check-tolerance T it exits 1 when a GA-N loss differs
from PyTorch's by more than T (relative) at any step.

The environment variable GA_MLIR_MAX_STEPS caps the optimizer steps per
configuration (of this command, ga_mlir.train_mlir and
examples/torch_mlp_digits.py): a quick run that checks the command works
(the documentation's test, test/docs, sets it to 2).

The MLIR-level analytics of the source tree (ga-opt's step of bench/, its
heap against --ga-memory-report to the byte): python -m ga_mlir.train_mlir.
"""

import argparse
import ast
import importlib
import os
import sys

_REEXEC_FLAG = "GA_TRAIN_PRELOADED"


def load_builder(spec):
    """The function `module:function` names."""
    module_name, sep, function_name = spec.partition(":")
    if not sep or not module_name or not function_name:
        raise SystemExit(f"error: --model {spec!r}: expected "
                         "MODULE:FUNCTION, e.g. my_model:build")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SystemExit(f"error: --model {spec!r}: cannot import "
                         f"{module_name}: {error}")
    builder = getattr(module, function_name, None)
    if not callable(builder):
        raise SystemExit(f"error: --model {spec!r}: {module_name} has no "
                         f"function {function_name}")
    return builder


def step_budget(steps):
    """`steps` (None: every batch), at most $GA_MLIR_MAX_STEPS where that is
    set."""
    cap = os.environ.get("GA_MLIR_MAX_STEPS")
    if not cap:
        return steps
    try:
        cap = int(cap)
    except ValueError:
        raise SystemExit(f"error: GA_MLIR_MAX_STEPS={cap!r}: expected a "
                         "number of steps")
    if cap < 1:
        raise SystemExit("error: GA_MLIR_MAX_STEPS must be at least 1")
    return cap if steps is None else min(steps, cap)


def _parse_args(values):
    args = {}
    for item in values:
        key, sep, text = item.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"error: --arg {item!r}: expected NAME=VALUE")
        try:
            args[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            args[key] = text
    return args


def _maybe_reexec(no_measure):
    """Preloads the heap counter (it must be loaded before anything
    allocates) by re-executing this command once."""
    from . import steplib
    lib = steplib.heap_count_library()
    if no_measure or not lib or os.environ.get(_REEXEC_FLAG):
        return
    env = dict(os.environ, LD_PRELOAD=lib, **{_REEXEC_FLAG: "1"})
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        env.setdefault(var, "1")
    os.execve(sys.executable,
              [sys.executable, "-m", "ga_mlir.train"] + sys.argv[1:], env)


# The columns of a report's table that both trainers print.
NAME = ("configuration", "", lambda c: c["name"])
FINAL_LOSS = ("final loss", ".5f", lambda c: c["loss"][-1])
SAMPLES_PER_S = ("samples/s", ".0f", lambda c: c["samples_per_s"])
PEAKS = (("static peak", "", lambda c: c["static_peak_bytes"]),
         ("measured peak", "", lambda c: c["measured_peak_bytes"]))


def print_configurations(report, columns, name_width):
    """Prints a table of the configurations of `report`: a row each, a column
    each (header, format, value of a configuration) of `columns`, the first
    (the name) left-aligned in `name_width` characters, the others
    right-aligned as wide as their header; an absent value (None) as '-'."""
    widths = [name_width] + [max(len(h), 8) for h, _, _ in columns[1:]]
    aligns = ["<"] + [">"] * (len(columns) - 1)
    print(" ".join(f"{h:{a}{w}}" for (h, _, _), a, w
                   in zip(columns, aligns, widths)))
    for c in report["configurations"]:
        cells = []
        for (_, fmt, value), a, w in zip(columns, aligns, widths):
            v = value(c)
            cells.append(f"{'-' if v is None else format(v, fmt):{a}{w}}")
        print(" ".join(cells))


def _print_table(report):
    print_configurations(report, [
        NAME, FINAL_LOSS,
        ("max rel diff", ".2e", lambda c: c["max_relative_loss_difference"]),
        SAMPLES_PER_S, *PEAKS], 14)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m ga_mlir.train",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--model", default="ga_mlir.torch.demo:digits_mlp",
                   help="MODULE:FUNCTION returning (model, loss_fn, "
                        "optimizer, batches)")
    p.add_argument("--arg", action="append", default=[],
                   metavar="NAME=VALUE", help="keyword argument of FUNCTION")
    p.add_argument("--n", default="1,4,16",
                   help="numbers of micro-batches N (comma-separated)")
    p.add_argument("--steps", type=int, default=None,
                   help="optimizer steps per configuration (default: every "
                        "batch)")
    p.add_argument("--out", default="ga-report", help="output folder")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip PyTorch's own full-batch step")
    p.add_argument("--no-measure", action="store_true",
                   help="do not preload the heap counter")
    p.add_argument("--check-tolerance", type=float, default=None,
                   help="exit 1 if a loss differs from the baseline's by "
                        "more than this (relative)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    a = p.parse_args(argv)
    try:
        ns = [int(n) for n in a.n.split(",") if n.strip()]
    except ValueError:
        p.error(f"--n {a.n!r}: expected comma-separated integers")
    if not ns or min(ns) < 1:
        p.error(f"--n {a.n!r}: every N must be at least 1")
    if a.steps is not None and a.steps < 1:
        p.error("--steps must be at least 1")
    builder = load_builder(a.model)
    kwargs = _parse_args(a.arg)
    _maybe_reexec(a.no_measure)

    import torch
    from .torch import CompileError, compare
    torch.set_num_threads(a.threads)
    built = builder(**kwargs)
    if not isinstance(built, (tuple, list)) or len(built) != 4:
        raise SystemExit(f"error: {a.model} must return (model, loss_fn, "
                         "optimizer, batches)")
    model, loss_fn, optimizer, batches = built
    try:
        report = compare(model, loss_fn, optimizer, batches,
                         micro_batches=ns, steps=step_budget(a.steps),
                         out=a.out,
                         baseline=not a.no_baseline, progress=not a.quiet)
    except CompileError as error:
        print(error, file=sys.stderr)
        return 1
    _print_table(report)
    print(f"wrote {a.out}: report.json, loss.png, throughput.png, "
          "memory.png, compare.png, tensorboard/")
    worst = max(c["max_relative_loss_difference"]
                for c in report["configurations"])
    if a.check_tolerance is not None and worst > a.check_tolerance:
        print(f"FAIL: a loss curve differs from {report['baseline']}'s by "
              f"{worst:.2e} > {a.check_tolerance}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
