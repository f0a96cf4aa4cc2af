"""The memory report of a data-parallel step (DataParallelTrainStep.
memory_report, see _distributed): --ga-memory-report of this rank's step
as compiled. The step's micro-batches have run-time sizes (its shard is an
argument), so a function that calls it with the rank's [begin, end) as
constants is reported: the inliner and the canonicalizer fix the sizes,
and the report counts a size that still varies between micro-batches at
its constant upper bound. Every argument declares its class (`ga.role`),
as the frontend lays them out."""

import json
import os
import tempfile

from .. import function_info
from . import _inplace
from ._options import _lowering_options, _run_pipeline

_REPORT = "ga_shard_report"


def argument_roles(spec, num_inputs):
    """The class of every argument of the step (--ga-memory-report's
    `roles`), as the frontend lays them out, whatever N is: parameters
    (trainable, frozen, buffers), optimizer state (the states, then the 0-d
    settings), inputs (and random arguments)."""
    first_state = len(spec.params) + len(spec.frozen) + \
        len(spec.buffer_names)
    first_input = spec.arg_count() - num_inputs - spec.num_random_args()
    return ["parameters"] * first_state + ["optimizer_state"] * (
        first_input - first_state) + ["inputs"] * (
        spec.arg_count() - first_input)


def _bind_shard(text, name, roles, batch_args, begin, end):
    """The module `text` with a function @ga_shard_report that calls the
    data-parallel step @`name` on this rank's shard: its two index
    arguments bound to `begin` and `end` (constants, so that the inliner and
    the canonicalizer fix the micro-batch sizes, and bound the uneven ones),
    its arguments declaring their report classes (`ga.role`: `roles`) and
    batch dimensions (`ga.batch`)."""
    info = function_info(text, name)
    args = info.arguments[:-2]
    batch = dict(batch_args)

    def attributes(i):
        marks = [f'ga.role = "{roles[i]}"']
        if i in batch:
            marks.append(f"ga.batch = {batch[i]} : i64")
        return "{" + ", ".join(marks) + "}"
    params = ", ".join(f"%a{i}: {t} {attributes(i)}"
                       for i, t in enumerate(args))
    results = ", ".join(info.results)
    values = ", ".join([f"%a{i}" for i in range(len(args))] +
                       ["%begin", "%end"])
    k = len(info.results)
    returned = ", ".join(f"%r#{i}" for i in range(k)) if k > 1 else "%r"
    call = f"%r:{k}" if k > 1 else "%r"
    wrapper = (
        f"  func.func @{_REPORT}({params}) -> ({results}) {{\n"
        f"    %begin = arith.constant {begin} : index\n"
        f"    %end = arith.constant {end} : index\n"
        f"    {call} = func.call @{name}({values}) : "
        f"({', '.join(info.arguments)}) -> ({results})\n"
        f"    return {returned} : {results}\n  }}\n")
    # The module's last line closes it: the wrapper goes before it.
    body = text.rstrip()
    return body[:body.rfind("}")] + wrapper + "}\n"


def report(ir, accumulate, collectives, v, num_inputs, options):
    """The report (a dict) of the variant `v` of a data-parallel step: `ir`
    rewritten by the pipeline `accumulate`, its collectives lowered by
    `collectives`, on the rank's shard `v.shard`."""
    text = _run_pipeline(ir, accumulate,
                         "ga-mlir refused the training step")
    text = _run_pipeline(
        text, f"builtin.module({collectives})",
        "ga-mlir could not lower the collectives")
    name = "train_step"
    if v.in_place:
        text = _inplace.write_results_in_place(text, v.in_place)
        name = _inplace.IMPL
    roles = argument_roles(v.spec, num_inputs)
    text = _bind_shard(text, name, roles, v.batch_args, *v.shard[:2])
    cpu = f"cpu={{{' '.join(_lowering_options(options))}}}"
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "report.json")
        # ga-memory-report bufferizes as --ga-lower-to-cpu does (empty
        # tensors into destinations included).
        _run_pipeline(text, "builtin.module(inline,canonicalize,"
                      "ga-memory-report{func="
                      f"{_REPORT} format=json {cpu} output={out}}})",
                      "--ga-memory-report failed")
        with open(out) as f:
            return json.load(f)[0]
