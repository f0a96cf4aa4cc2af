"""What the compiled step's memory is and what a byte budget chooses, by
the driver (ga_mlir.driver): the step's --ga-memory-report as the library
is bufferized (target "report"), and N with the recompute set under
`max_memory` (--ga-choose-micro-batches, target "choice"), cached beside
the libraries."""

import dataclasses
import hashlib
import json
import os

from .. import library_path
from ._options import report_options, run_driver, step_options


def _memory_report(ir, micro_batches, batch_args, options, in_place,
                   roles, target="cpu"):
    """--ga-memory-report of the step as compiled for `target`: its row (a
    dict) for N = `micro_batches`, with the options of the library (for
    "cuda": the GPU step's device bytes, bf16 where it stores bf16, and the
    cuBLASLt workspace) and the classes `roles` of the arguments; for the
    in-place form, the report of @train_step_in_place (the wrapper only
    calls it). One driver call."""
    compile_options = report_options(
        step_options(micro_batches, batch_args, options, target), options,
        in_place, roles, target)
    result = run_driver(ir, compile_options, "--ga-memory-report failed")
    return json.loads(result.memory_report)[0]


def _budget_text(max_memory):
    """max_memory as --ga-accumulate takes it: bytes (an int) or a string such
    as "256MiB" (checked by the pass)."""
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, str)):
        raise TypeError("max_memory: a number of bytes or a string such as "
                        f"'256MiB', not {max_memory!r}")
    return str(max_memory).strip()


def _choose_micro_batches(ir, batch_args, micro_batches, micro_batch_size,
                          max_memory, options, in_place=(), roles=(),
                          target="cpu"):
    """N and the recompute set as --ga-choose-micro-batches chooses them,
    by the driver (ga_mlir.driver, target "choice"): under `max_memory`,
    the configuration of least estimated time whose total peak
    (--ga-memory-report, bufferized as the library is) fits (N fixed by
    `micro_batches` when given, the set by options' `recompute` when given),
    or ceil(B / micro_batch_size). Each candidate is measured as
    _memory_report measures the library: its results `in_place` (pairs of
    result and argument) written in place, its arguments of the classes
    `roles`, for `target` (for "cuda" the budget is device bytes of the
    GPU step, as _memory_report measures it). Returns a dict: micro_batches, recompute,
    predicted_peak and recompute_work (None without a budget). Contradictory
    options and a budget that nothing fits raise CompileError with the
    compiler's diagnostics. Cached like the libraries."""
    compile_options = dataclasses.replace(
        step_options(micro_batches or 0, batch_args, options, target),
        micro_batch_size=micro_batch_size or 0,
        max_memory="" if max_memory is None else _budget_text(max_memory),
        in_place=tuple(in_place), report_roles=tuple(roles),
        target="choice", memory_target=target)
    key = hashlib.sha256("\0".join(
        [ir, repr(compile_options), os.path.realpath(library_path()),
         str(os.path.getmtime(library_path()))]).encode()).hexdigest()[:24]
    cached = os.path.join(_cache_dir(), f"choice-{key}.json")
    if os.path.exists(cached):
        with open(cached) as f:
            return json.load(f)
    chosen = run_driver(ir, compile_options,
                        "ga-mlir could not choose the number of "
                        "micro-batches")
    budget = chosen.predicted_peak is not None
    choice = {"micro_batches": chosen.micro_batches,
              "recompute": chosen.recompute if budget
              else options.get("recompute"),
              "predicted_peak": chosen.predicted_peak,
              "recompute_work": chosen.recompute_work}
    with open(cached + f".{os.getpid()}", "w") as f:
        json.dump(choice, f)
    os.replace(cached + f".{os.getpid()}", cached)
    return choice


def _cache_dir():
    root = os.environ.get("GA_MLIR_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ga_mlir")
    os.makedirs(root, exist_ok=True)
    return root
