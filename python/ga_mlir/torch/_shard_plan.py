"""The sharded-parameter plan under `max_memory` (see _fsdp): N and, per
bucket of parameters, kept gathered or re-gathered per micro-batch and
reduced per micro-batch or after the loop.

The per-rank peak of the default plan (every bucket resharded) is
measured for each candidate N by --ga-memory-report on this rank's step as
compiled (the driver's report target, _dp_memory.report), the largest over
the ranks taken (one all_reduce: every rank compiles together and gets the
same plan). Then (fit) every plan is ordered by bytes moved per step and
measured the same way, as compiled, until the first that fits: the least
traffic that fits, its measured peak reported as the predicted one, as
--ga-choose-micro-batches measures N. The peak is not monotone in the
choices (a kept bucket can lower it), so no plan is ruled out by
another's; above _EXHAUSTIVE plans --ga-shard-plan's model (the default
plan's peak plus what each kept bucket and full accumulator holds) guides
a search of a few measured plans instead. A budget that nothing fits
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
from ._dp_memory import budget_bytes, report
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


# Above this many plans (N, and per bucket kept gathered or not, reduced
# after the loop or not) they are not all measured: the model guides the
# search (_fit_by_model), at most _ROUNDS plans measured.
_EXHAUSTIVE = 64
_ROUNDS = 4


def _measure(step, ir, batch_args, spec, choice, variant):
    """The per-rank peak (the largest over the ranks) of the step as
    compiled with `choice`: --ga-memory-report's total peak, cached beside
    the libraries as base_peaks' (a budget sweep measures a plan once)."""
    saved, step._choice = step._choice, choice
    try:
        marked, options = step._step_options(
            ir, choice["micro_batches"], batch_args, spec)
        key = hashlib.sha256("\0".join(
            [marked, repr(_without_plan_file(options)), repr(variant.shard),
             repr(variant.in_place), repr(sorted(step.options.items())),
             os.path.realpath(library_path()),
             str(os.path.getmtime(library_path()))]).encode()).hexdigest()
        cached = os.path.join(_cache_dir(), f"shard-plan-peak-{key[:24]}.json")
        if os.path.exists(cached):
            with open(cached) as f:
                peak = json.load(f)
        else:
            row = report(marked, options, variant, step.num_inputs,
                         step.options)
            peak = int(row["total_peak"])
            with open(cached + f".{os.getpid()}", "w") as f:
                json.dump(peak, f)
            os.replace(cached + f".{os.getpid()}", cached)
    finally:
        step._choice = saved
    return _largest(peak, step)


def _key(choice):
    return (choice["micro_batches"], tuple(choice["keep_gathered"]),
            tuple(choice["reduce_after_loop"]))


def _full_extra(row, world):
    """What the full accumulator adds over the shard accumulator on the rank
    of fewest rows (ShardPlan.cpp's fullAccumulatorExtra)."""
    size = max(row["gathered_bytes"], row["scattered_bytes"])
    rows = row.get("rows", 0)
    return size if rows <= 0 else size - size // rows * (rows // world)


def _decisions(rows, buckets):
    """The binary decisions of the plan: (bucket, "gather") where a member
    is gathered per micro-batch, (bucket, "reduce") where one is reduced
    per micro-batch (the others change nothing)."""
    items = []
    for b, bucket in enumerate(buckets):
        members = [rows[a] for a in bucket["arguments"]]
        if any(r["gathers_per_micro_batch"] > 0 for r in members):
            items.append((b, "gather"))
        if any(r["scatters_per_micro_batch"] > 0 for r in members):
            items.append((b, "reduce"))
    return items


def _plan(rows, buckets, n, taken, base, world):
    """The plan at N = `n` with the decisions `taken` (a set of items of
    _decisions): --ga-shard-plan's JSON, its bytes and collectives counted
    as evaluateBucket counts them, `predicted_peak` the model's (the
    default plan's measured peak plus what the kept buckets and full
    accumulators hold)."""
    plan = {"micro_batches": n, "base_peak": base, "moved": 0, "calls": 0,
            "keep_gathered": [], "reduce_after_loop": [], "buckets": []}
    resident_total = 0
    for b, bucket in enumerate(buckets):
        keep, defer = (b, "gather") in taken, (b, "reduce") in taken
        out = dict(bucket, all_gathers=0, reduce_scatters=0, moved=0,
                   resident=0,
                   gathered="once" if keep else "per micro-batch",
                   reduced="after the loop" if defer else "per micro-batch")
        for a in bucket["arguments"]:
            r = rows[a]
            size = max(r["gathered_bytes"], r["scattered_bytes"])
            kept = keep and r["gathers_per_micro_batch"] > 0
            deferred = defer and r["scatters_per_micro_batch"] > 0
            gathers = 1 if kept else \
                n * r["gathers_per_micro_batch"] + r["gathers_outside_loops"]
            scatters = 1 if deferred else n * r["scatters_per_micro_batch"] \
                + r["scatters_outside_loops"]
            out["all_gathers"] += gathers
            out["reduce_scatters"] += scatters
            out["moved"] += (gathers + scatters) * size
            if kept:
                out["resident"] += size
                plan["keep_gathered"].append(r["argument"])
            if deferred:
                out["resident"] += _full_extra(r, world)
                plan["reduce_after_loop"].append(r["result"])
        plan["moved"] += out["moved"]
        plan["calls"] += out["all_gathers"] + out["reduce_scatters"]
        resident_total += out["resident"]
        plan["buckets"].append(out)
    plan["keep_gathered"].sort()
    plan["reduce_after_loop"].sort()
    plan["predicted_peak"] = base + resident_total
    return plan


def _rows(step, choice):
    """--ga-shard-parameters' costs (its plan-output, written by choose()'s
    rewrite) by argument, each with the rows of its whole parameter."""
    with open(step._plan_file) as f:
        rows = {r["argument"]: r for r in json.load(f)}
    for r in rows.values():
        p = step._traced.params[r["result"]]
        r["rows"] = step._full_shapes[p][0] if p in step._full_shapes else 0
    return rows


def fit(step, ir, batch_args, spec, counts, peaks, max_memory, variant):
    """The plan of fewest bytes moved (then smallest N, fewest collectives)
    whose per-rank peak as compiled fits the budget, as
    --ga-choose-micro-batches chooses N: every plan (N among `counts`, each
    bucket kept gathered or not, reduced after the loop or not) ordered by
    bytes moved, each measured (--ga-memory-report of the step as compiled
    with it, the largest over the ranks) until the first that fits; none
    fits: CompileError (budget-not-met) naming the least peak of all. None is
    skipped: the peak is not monotone in the decisions (keeping a bucket
    gathered can lower it: one copy through the loop instead of the
    forward's and the backward's re-gathers; with buffers shared, two
    decisions can fit where one alone does not), so a plan measured over
    the budget rules out no other. Exact, and at most _EXHAUSTIVE plans:
    beyond, the model guides the search (_fit_by_model). The choice records
    the plan of the next fewer bytes (`next_cheaper`: measured over the
    budget, or ruled out) and how many plans were measured; the model's
    peak (base peak plus what the kept buckets and full accumulators hold,
    as --ga-shard-plan sums it) stays as `modelled_peak`."""
    if max_memory is None:
        return choose(step, ir, batch_args, spec, counts, peaks, None)
    # The default plan (every decision not taken): its costs, its buckets.
    choice = choose(step, ir, batch_args, spec, counts, peaks, None)
    rows = _rows(step, choice)
    buckets = [{"arguments": b["arguments"], "results": b["results"],
                "bytes": b["bytes"]} for b in choice["buckets"]]
    items = _decisions(rows, buckets)
    if len(counts) << len(items) > _EXHAUSTIVE:
        choice = choose(step, ir, batch_args, spec, counts, peaks, max_memory)
        return _fit_by_model(step, ir, batch_args, spec, counts, peaks,
                             choice, variant)
    budget, world = budget_bytes(max_memory), step.world_size
    plans = []
    # Every N, even one whose default plan is over the budget.
    for n, base in zip(counts, peaks):
        for mask in range(1 << len(items)):
            taken = {item for k, item in enumerate(items) if mask >> k & 1}
            plans.append((taken, _plan(rows, buckets, n, taken, base, world)))
    plans.sort(key=lambda tp: (tp[1]["moved"], tp[1]["micro_batches"],
                               tp[1]["calls"], tp[1]["predicted_peak"]))
    measured = 0
    for index, (taken, plan) in enumerate(plans):
        plan["modelled_peak"] = plan["predicted_peak"]
        if taken:
            measured += 1
            plan["predicted_peak"] = _measure(step, ir, batch_args, spec,
                                              plan, variant)
        else:
            plan["predicted_peak"] = plan["base_peak"]
        if plan["predicted_peak"] <= budget:
            cheaper = [p for _, p in plans[:index]
                       if p["moved"] < plan["moved"]]
            plan.update(budget=budget, candidates=choice["candidates"],
                        measured_plans=measured, next_cheaper={
                            k: cheaper[-1][k] for k in (
                                "micro_batches", "keep_gathered",
                                "reduce_after_loop", "moved", "calls")}
                        if cheaper else None)
            return plan
    # Every plan measured: the smallest per-rank budget is the least of
    # their peaks (not necessarily the default plan's at the largest N).
    least = min(plans, key=lambda tp: (tp[1]["predicted_peak"],
                                       tp[1]["moved"]))[1]
    raise CompileError(
        f"compile_train_step: no sharded-parameter plan fits "
        f"max_memory={max_memory} per rank: the smallest per-rank peak of "
        f"the {len(plans)} plans (N = {least['micro_batches']}, "
        f"{least['moved']} bytes moved per step) is "
        f"{least['predicted_peak']} bytes; a per-rank budget of at least "
        f"{least['predicted_peak']} bytes fits", code="budget-not-met")


def _fit_by_model(step, ir, batch_args, spec, counts, peaks, choice,
                  variant):
    """fit() for plans of many decisions: --ga-shard-plan's choice, the
    chosen plan's peak measured as compiled: the plan of fewest bytes moved
    (then smallest N, fewest collectives, lowest peak) among those measured
    to fit the budget, the model's room corrected by each measurement. The
    default plan (every bucket resharded) at an N whose base peak fits is
    measured already, so one always fits when choose() finds any."""
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
