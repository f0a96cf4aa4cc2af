"""The sharded-parameter plan under `max_memory` (see _fsdp): N and, per
bucket of parameters, kept gathered or re-gathered per micro-batch and
reduced per micro-batch or after the loop, as --ga-shard-plan chooses them.

The per-rank peak of the default plan (every bucket resharded after use) is
measured for each candidate N by --ga-memory-report on this rank's step as
compiled (the driver's report target, _dp_memory.report), the largest over
the ranks taken (one all_reduce: every rank compiles together and gets the
same plan); the driver's shard-plan target (--ga-shard-plan) then adds
what each kept bucket holds and chooses the plan of fewest bytes moved
that fits. That sum is a model (a kept bucket changes what the buffers
around it can share), so the chosen plan's own peak is measured the same
way, as compiled, before it is taken (fit): over the budget, the planner
chooses again with less room; under it by more than the model assumed,
with more; the plan of fewest bytes among those measured to fit is taken,
its measured peak reported as the predicted one. A budget that nothing fits
raises CompileError (budget-not-met) naming the smallest per-rank budget
that would."""

import dataclasses
import hashlib
import json
import os

import torch

from .. import driver, library_path
from ._budget import _cache_dir
from ._common import CompileError
from ._dp_memory import report
from ._options import run_driver


def candidate_counts(smallest_shard, fixed=None):
    """The N considered: `fixed` when given, else 1, 2, 4, ... up to the
    smallest rank's samples, and that number (at most 5 candidates: each is
    a rewrite and a memory report)."""
    if fixed is not None:
        return [fixed]
    counts, n = [], 1
    while n < smallest_shard and len(counts) < 4:
        counts.append(n)
        n *= 2
    return counts + [smallest_shard]


def _without_plan_file(options):
    """`options` with the plan file left out (a path of this step's own:
    the cache key is the same across processes without it)."""
    fsdp = options.shard_parameters
    if fsdp is None:
        return options
    return dataclasses.replace(
        options, shard_parameters=dataclasses.replace(fsdp, plan_output=""))


def _largest(peak, step):
    """The largest of `peak` over the ranks (every rank decides alike)."""
    import torch.distributed as dist
    mine = torch.tensor([peak], dtype=torch.int64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX, group=step.process_group)
    return int(mine)


def base_peaks(step, ir, batch_args, spec, counts, variant):
    """The per-rank peak (the largest over the ranks) of the default plan
    for each N in `counts`: --ga-memory-report's total peak of the step as
    compiled with every bucket resharded (the driver's report target, as
    _dp_memory.report measures it)."""
    import torch.distributed as dist
    peaks = []
    for n in counts:
        # The data-parallel form of the step (its shard's bounds as
        # arguments) and the driver's options for it.
        marked, options = step._step_options(ir, n, batch_args, spec)
        # Cached beside the libraries (a budget sweep measures each N once).
        key = hashlib.sha256("\0".join(
            [marked, repr(_without_plan_file(options)), repr(variant.shard),
             repr(variant.in_place), repr(sorted(step.options.items())),
             os.path.realpath(library_path()),
             str(os.path.getmtime(library_path()))]).encode()).hexdigest()
        cached = os.path.join(_cache_dir(), f"shard-peak-{key[:24]}.json")
        if os.path.exists(cached):
            with open(cached) as f:
                peaks.append(json.load(f))
            continue
        row = report(marked, options, variant, step.num_inputs, step.options)
        peaks.append(int(row["total_peak"]))
        with open(cached + f".{os.getpid()}", "w") as f:
            json.dump(peaks[-1], f)
        os.replace(cached + f".{os.getpid()}", cached)
    mine = torch.tensor(peaks, dtype=torch.int64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX, group=step.process_group)
    return [int(p) for p in mine]


def choose(step, ir, batch_args, spec, counts, peaks, max_memory):
    """--ga-shard-plan's choice (a dict, its JSON), by one driver call
    (target "shard-plan"): the step sharded with the default plan at the
    first N (the collectives' structure does not depend on N), its costs
    read from the plan-output of --ga-shard-parameters, the buckets of the
    step's bucket size."""
    marked, options = step._step_options(ir, counts[0], batch_args, spec)
    options = dataclasses.replace(
        options, target="shard-plan", shard_plan=driver.ShardPlan(
            tuple(counts), tuple(peaks),
            "" if max_memory is None else str(max_memory).strip()))
    result = run_driver(marked, options,
                        "ga-mlir found no sharded-parameter plan")
    choice = json.loads(result.shard_plan)
    choice["candidates"] = [[n, p] for n, p in zip(counts, peaks)]
    return choice


# Plans measured at most per budget (each is a rewrite and a memory report).
_ROUNDS = 4


def _measure(step, ir, batch_args, spec, choice, variant):
    """The per-rank peak (the largest over the ranks) of the step as
    compiled with `choice`: --ga-memory-report's total peak."""
    saved, step._choice = step._choice, choice
    try:
        marked, options = step._step_options(
            ir, choice["micro_batches"], batch_args, spec)
        row = report(marked, options, variant, step.num_inputs, step.options)
    finally:
        step._choice = saved
    return _largest(int(row["total_peak"]), step)


def _key(choice):
    return (choice["micro_batches"], tuple(choice["keep_gathered"]),
            tuple(choice["reduce_after_loop"]))


def fit(step, ir, batch_args, spec, counts, peaks, max_memory, variant):
    """choose(), with the chosen plan's peak measured as compiled: the plan
    of fewest bytes moved (then smallest N, fewest collectives, lowest
    peak) among those measured to fit the budget. The default plan (every
    bucket resharded) at an N whose base peak fits is measured already, so
    one always fits when choose() finds any."""
    choice = choose(step, ir, batch_args, spec, counts, peaks, max_memory)
    if max_memory is None:
        return choice
    budget, base = int(choice["budget"]), dict(zip(counts, peaks))
    best, seen = None, set()
    for _ in range(_ROUNDS):
        if _key(choice) in seen:
            break
        seen.add(_key(choice))
        modelled = choice["predicted_peak"]
        extra = choice["keep_gathered"] or choice["reduce_after_loop"]
        measured = _measure(step, ir, batch_args, spec, choice, variant) \
            if extra else base[choice["micro_batches"]]
        choice.update(modelled_peak=modelled, predicted_peak=measured)
        rank = (choice["moved"], choice["micro_batches"], choice["calls"],
                measured)
        if measured <= budget and (best is None or rank < best[0]):
            best = (rank, choice)
        # The room the model would need for the measured peak to meet the
        # budget exactly.
        room = modelled + budget - measured
        if room < min(peaks):
            break
        try:
            choice = choose(step, ir, batch_args, spec, counts, peaks, room)
        except CompileError:
            break
    if best is None:
        # Every bucket resharded at the N of lowest base peak: measured.
        choice = choose(step, ir, batch_args, spec, counts, peaks,
                        min(peaks))
        choice.update(modelled_peak=choice["predicted_peak"],
                      predicted_peak=base[choice["micro_batches"]])
        best = (None, choice)
    best[1]["budget"] = budget
    return best[1]
