"""The memory report of a data-parallel step (DataParallelTrainStep.
memory_report, see _distributed): --ga-memory-report of this rank's step
as compiled for its target (the CPU library's heap, or the GPU step's
device bytes), by the driver (target "report"). The step's micro-batches have
run-time sizes (its shard is an argument), so the driver reports a function
that calls it with the rank's [begin, end) as constants: the inliner and
the canonicalizer fix the sizes, and the report counts a size that still
varies between micro-batches at its constant upper bound. Every argument
declares its class (`ga.role`), as the frontend lays them out."""

import dataclasses
import json

from .. import driver
from ._options import report_options, run_driver


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


def report(ir, compile_options, v, num_inputs, options):
    """The report (a dict) of the variant `v` of a data-parallel step: `ir`
    under the driver's `compile_options` (_distributed's step options), on
    the rank's shard `v.shard` (bound as constants by the driver),
    bufferized as the library of the step's target is: for the CPU under
    compile_train_step's `options`, its collectives lowered to the host's;
    for target="cuda" the GPU step's device bytes, its collectives lowered
    to NCCL's by the GPU bufferization (their buffers: a bucket's packed
    gradients, a padded or copied reduce-scatter input and a gathered
    parameter are temporaries; an accumulator reduced in place stays one),
    the buckets formed as the GPU lowering forms them. One driver call."""
    target = "cuda" if compile_options.target == "cuda" else "cpu"
    compile_options = dataclasses.replace(
        report_options(compile_options, options, v.in_place,
                       argument_roles(v.spec, num_inputs), target),
        host_collectives=target == "cpu", report_shard=tuple(v.shard[:2]))
    result = run_driver(ir, compile_options, "--ga-memory-report failed")
    return json.loads(result.memory_report)[0]


class Probe:
    """What `report` reads of a variant (its spec, the rank's shard, the
    results written in place), before the variant is compiled."""

    def __init__(self, spec, batch_args, shard, in_place):
        self.spec, self.batch_args = spec, batch_args
        self.shard, self.in_place = shard, in_place


def budget_bytes(max_memory):
    """max_memory in bytes, read as --ga-accumulate's max-memory is (an int,
    or a string that ga_mlir.driver.parse_byte_count reads: the compiler's
    own reader). A string it does not read was refused before (the
    budget's pass checks it first)."""
    if isinstance(max_memory, int):
        return max_memory
    parsed = driver.parse_byte_count(max_memory)
    if parsed is None:
        raise ValueError(f"max_memory: not a byte count: {max_memory!r}")
    return parsed


def budget_micro_batches(step, ir, batch_args, spec, first, local):
    """N of a data-parallel step under `step.max_memory`, measured on the
    step as memory_report() measures it (`report`: for target="cuda" the
    GPU step's device bytes with the NCCL buffers of its buckets, for the
    CPU the library with its host collectives): the least N from `first`
    (the single-process choice, which counts no collective's buffers) up to this rank's `local` samples whose peak fits.
    Sets `step.choice["predicted_peak"]` to that peak (and
    `single_process_peak` to the first choice's, `peaks` to the peak of
    each N measured), so that the budget
    constrains the figure the report shows (each rank's own: its N is its
    own, as without a budget). None fits: CompileError
    (budget-not-met) naming the smallest per-rank budget that would."""
    from ._common import CompileError
    budget = budget_bytes(step.max_memory)
    probe = Probe(spec, batch_args, step._shard, step._in_place_pairs(spec))
    peaks = {}

    def peak(n):
        if n not in peaks:
            marked, options = step._step_options(ir, n, batch_args, spec)
            try:
                row = report(marked, options, probe, step.num_inputs,
                             step.options)
            except CompileError:
                if not probe.in_place:
                    raise
                # The library's copying form, as _step compiles it then.
                probe.in_place = []
                row = report(marked, options, probe, step.num_inputs,
                             step.options)
            peaks[n] = int(row["total_peak"])
        return peaks[n]

    # Doubling from `first`, then the least N between the last that does
    # not fit and the first that does (the peak falls as N grows).
    low, n = first - 1, max(1, min(first, local))
    while peak(n) > budget and n < local:
        low, n = n, min(2 * n, local)
    if peak(n) > budget:
        smallest = min(peaks.values())
        raise CompileError(
            f"compile_train_step: no number of micro-batches fits "
            f"max_memory={step.max_memory} per rank: the data-parallel "
            f"step's smallest per-rank peak is {smallest} bytes (N = "
            f"{min(peaks, key=lambda k: (peaks[k], k))}, its collectives' "
            f"buffers included); a per-rank budget of at least "
            f"{smallest} bytes fits", code="budget-not-met")
    high = n
    while high - low > 1:
        middle = (low + high) // 2
        if peak(middle) <= budget:
            high = middle
        else:
            low = middle
    first_choice = step.choice or {}
    step.choice = dict(first_choice, micro_batches=high,
                       predicted_peak=peaks[high],
                       single_process_peak=first_choice.get("predicted_peak"),
                       peaks=dict(sorted(peaks.items())))
    return high
