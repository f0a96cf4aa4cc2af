"""What the compiled step's memory is and what a byte budget chooses, by
the driver (ga_mlir.driver): the step's --ga-memory-report as the library
is bufferized (target "report"), and N with the recompute set under
`max_memory` (--ga-choose-micro-batches, target "choice"), cached beside
the libraries."""

import dataclasses
import hashlib
import json
import os
import subprocess
import sys

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
                          target="cpu", reserved=0):
    """N and the recompute set as --ga-choose-micro-batches chooses them,
    by the driver (ga_mlir.driver, target "choice"): under `max_memory`,
    the configuration of least estimated time whose total peak
    (--ga-memory-report, bufferized as the library is) fits (N fixed by
    `micro_batches` when given, the set by options' `recompute` when given),
    or ceil(B / micro_batch_size). Each candidate is measured as
    _memory_report measures the library: its results `in_place` (pairs of
    result and argument) written in place, its arguments of the classes
    `roles`, for `target` (for "cuda" the budget is device bytes of the
    GPU step, as _memory_report measures it); `reserved` bytes of the
    budget are kept for the results the call returns (_returned_bytes),
    and counted in the predicted peak. Returns a dict: micro_batches,
    recompute,
    predicted_peak and recompute_work (None without a budget). Contradictory
    options and a budget that nothing fits raise CompileError with the
    compiler's diagnostics. Cached like the libraries."""
    compile_options = dataclasses.replace(
        step_options(micro_batches or 0, batch_args, options, target),
        micro_batch_size=micro_batch_size or 0,
        max_memory="" if max_memory is None else _budget_text(max_memory),
        in_place=tuple(in_place), report_roles=tuple(roles),
        target="choice", memory_target=target,
        reserved_bytes=int(reserved) if max_memory is not None else 0)
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


_MEASURED = {}  # _returned_bytes measured in this process


def _returned_bytes(types, draws_seed):
    """The heap bytes one call of a compiled CPU step allocates to return
    its results: a tensor (PyTorch's objects and storage) cloned from the
    library's result for each (shape, dtype) of `types` (the loss, the
    metrics), and with `draws_seed` the seed tensor a step with dropout
    draws, alive with them during the call. The static report counts the
    library's own result buffers, not these. Measured, with a warm-up, by
    libGAHeapCount.so (the counter the measured peaks use): in this process
    when it is preloaded, else once in a child process with it preloaded;
    cached by the types and torch's version. 0 where the counter is not
    built."""
    import torch
    from .. import steplib
    path = steplib.heap_count_library()
    if path is None:
        return 0
    request = [[list(shape), str(dtype)] for shape, dtype in types]
    if steplib.HeapCounter().active:
        # Once per process: the report and the budget see the same bytes.
        key = json.dumps([request, draws_seed])
        if key not in _MEASURED:
            _MEASURED[key] = _measure_returned(request, draws_seed)
        return _MEASURED[key]
    key = hashlib.sha256(json.dumps(
        [request, draws_seed, torch.__version__,
         str(os.path.getmtime(path))]).encode()).hexdigest()[:24]
    cached = os.path.join(_cache_dir(), f"returned-{key}.json")
    if os.path.exists(cached):
        with open(cached) as f:
            return json.load(f)
    child = subprocess.run(
        [sys.executable, "-c",
         "import sys; from ga_mlir.torch._budget import _returned_main; "
         "_returned_main(sys.argv[1])", json.dumps([request, draws_seed])],
        env=dict(os.environ, LD_PRELOAD=path, GA_HEAP_COUNT_PRELOADED="1",
                 OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"),
        capture_output=True, text=True, check=True)
    returned = int(child.stdout.strip().splitlines()[-1])
    with open(cached + f".{os.getpid()}", "w") as f:
        json.dump(returned, f)
    os.replace(cached + f".{os.getpid()}", cached)
    return returned


def _measure_returned(request, draws_seed):
    """_returned_bytes in a process with the counter preloaded: the peak
    growth of the heap while the call's returned tensors (and seed) are
    allocated as the call allocates them (_fastcall.CallPlan.call,
    _call.call_step), the largest of three after a warm-up."""
    import torch
    from .. import steplib
    counter = steplib.HeapCounter()
    sources = [torch.zeros(shape, dtype=getattr(torch, dtype.split(".")[-1]))
               for shape, dtype in request]

    def allocate():
        seed = torch.randint(2 ** 63 - 1, (), dtype=torch.int64) \
            if draws_seed else None
        return seed, [t.clone() for t in sources]

    allocate()
    peaks = []
    for _ in range(3):
        counter.reset_peak()
        live = counter.live()
        kept = allocate()
        peaks.append(counter.peak() - live)
        del kept
    return max(peaks)


def _returned_main(argument):
    """The child process of _returned_bytes: prints the bytes."""
    request, draws_seed = json.loads(argument)
    print(_measure_returned(request, draws_seed))
