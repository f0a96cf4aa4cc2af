"""The sharded-parameter plan under `max_memory` (see _fsdp): N and, per
bucket of parameters, kept gathered or re-gathered per micro-batch and
reduced per micro-batch or after the loop, as --ga-shard-plan chooses them.

The per-rank peak of the default plan (every bucket resharded after use) is
measured for each candidate N by --ga-memory-report on this rank's step as
compiled (the driver's report target, _dp_memory.report), the largest over
the ranks taken (one all_reduce: every rank compiles together and gets the
same plan); the driver's shard-plan target (--ga-shard-plan) then adds
what each kept bucket holds and chooses the plan of fewest bytes moved
that fits. A budget that nothing fits raises CompileError (budget-not-met)
naming the smallest per-rank budget that would."""

import dataclasses
import hashlib
import json
import os

import torch

from .. import driver, library_path
from ._budget import _cache_dir
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
