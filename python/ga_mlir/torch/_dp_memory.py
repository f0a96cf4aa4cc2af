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
