"""What the compiled step's memory is and what a byte budget chooses: the
step rewritten by --ga-accumulate, its --ga-memory-report as the library is
bufferized, and N with the recompute set under `max_memory`
(--ga-choose-micro-batches), cached beside the libraries."""

import hashlib
import json
import os
import tempfile

from .. import PipelineError, driver, library_path
from . import _inplace
from ._common import CompileError
from ._locations import explain, first_code
from ._options import (_driver_options, _lowering_options, _mark,
                       _pipelines, _rewrite_options, _run_pipeline)


def _rewrite(ir, pipelines, in_place):
    """The step rewritten by --ga-accumulate, and with `in_place` (pairs of
    result and argument indices) the in-place form of _inplace (None when
    the text is not in the expected form)."""
    rewritten = _run_pipeline(ir, pipelines[0],
                              "ga-mlir refused the training step")
    return rewritten, (_inplace.write_results_in_place(rewritten, in_place)
                       if in_place else None)


def _memory_report(ir, micro_batches, batch_args, options, in_place,
                   roles):
    """--ga-memory-report of the step as compiled: its row (a dict) for N =
    `micro_batches`, with the CPU options of the library and the classes
    `roles` of the arguments; for the in-place form, the report of
    @train_step_in_place (the wrapper only calls it)."""
    cpu = (f"cpu={{{' '.join(_lowering_options(options))}}} "
           f"roles={','.join(roles)}")
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "report.json")
        if in_place:
            _, wrapped = _rewrite(
                ir, _pipelines(micro_batches, batch_args, options), in_place)
            _run_pipeline(wrapped, "builtin.module("
                          f"ga-memory-report{{func={_inplace.IMPL} "
                          f"format=json {cpu} output={out}}})",
                          "--ga-memory-report failed")
        else:
            report = [f"sweep={micro_batches}", "format=json"]
            rewrite = _rewrite_options(options)
            if rewrite:
                report.append(f"accumulate={{{rewrite}}}")
            _run_pipeline(ir, f"builtin.module({_mark(batch_args)},"
                          f"ga-memory-report{{{' '.join(report)} {cpu} "
                          f"output={out}}})", "--ga-memory-report failed")
        with open(out) as f:
            return json.load(f)[0]


def _budget_text(max_memory):
    """max_memory as --ga-accumulate takes it: bytes (an int) or a string such
    as "256MiB" (checked by the pass)."""
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, str)):
        raise TypeError("max_memory: a number of bytes or a string such as "
                        f"'256MiB', not {max_memory!r}")
    return str(max_memory).strip()


def _choose_micro_batches(ir, batch_args, micro_batches, micro_batch_size,
                          max_memory, options):
    """N and the recompute set as --ga-choose-micro-batches chooses them,
    by the driver (ga_mlir.driver, target "choice"): under `max_memory`,
    the configuration of least estimated time whose total peak
    (--ga-memory-report, bufferized as the library is) fits (N fixed by
    `micro_batches` when given, the set by options' `recompute` when given),
    or ceil(B / micro_batch_size). Returns a dict: micro_batches, recompute,
    predicted_peak and recompute_work (None without a budget). Contradictory
    options and a budget that nothing fits raise CompileError with the
    compiler's diagnostics. Cached like the libraries."""
    compile_options = _driver_options(micro_batches or 0, batch_args,
                                      options)
    compile_options.micro_batch_size = micro_batch_size or 0
    compile_options.max_memory = "" if max_memory is None else \
        _budget_text(max_memory)
    compile_options.target = "choice"
    key = hashlib.sha256("\0".join(
        [ir, repr(compile_options), os.path.realpath(library_path()),
         str(os.path.getmtime(library_path()))]).encode()).hexdigest()[:24]
    cached = os.path.join(_cache_dir(), f"choice-{key}.json")
    if os.path.exists(cached):
        with open(cached) as f:
            return json.load(f)
    try:
        chosen = driver.compile(ir, compile_options, filename="<train_step>")
    except PipelineError as error:
        raise CompileError(
            "ga-mlir could not choose the number of micro-batches:\n" +
            "\n".join(explain(d) for d in error.diagnostics),
            first_code(error.diagnostics), error.diagnostics) from None
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
