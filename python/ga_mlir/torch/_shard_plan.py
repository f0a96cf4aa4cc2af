"""The sharded-parameter plan under `max_memory` (see _fsdp): N and, per
bucket of parameters, kept gathered or re-gathered per micro-batch and
reduced per micro-batch or after the loop.

The per-rank peak of the default plan (every bucket resharded) is
measured for each candidate N by --ga-memory-report on this rank's step as
compiled (the driver's report target, _dp_memory.report), the largest over
the ranks taken (one all_reduce: every rank compiles together and gets the
same plan). Then (fit) the plans are visited in order of bytes moved per
step (_shard_search.by_bytes: lazily, never listed) and measured the same
way, as compiled, until the first that fits: the least traffic that fits,
its measured peak reported as the predicted one, as
--ga-choose-micro-batches measures N. The peak is not monotone in the
choices (a kept bucket can lower it), so no plan is ruled out by
another's; only by a lower bound on its own peak over the budget
(_shard_search.Space.bound: what it holds through the loop, and the
default plan's loop profile). After _CAP compiles the choice is not proven
least (`proven_least`, `least_bytes`). A budget that nothing fits raises
CompileError (budget-not-met) naming the smallest per-rank budget that
would (the plans visited in order of their lower bound)."""

import dataclasses
import hashlib
import json
import os

import torch

from .. import driver, library_path
from . import _shard_search
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


def _cached_report(prefix, step, marked, options, variant, figures,
                   lowering=None):
    """`figures` of this rank's --ga-memory-report row (_dp_memory.report)
    of `marked` compiled with `options` (the library's options
    `lowering`, by default the step's), kept as JSON in the cache folder
    under `prefix` and a hash of all that the report depends on (the
    library included): a budget sweep measures a step once."""
    lowering = step.options if lowering is None else lowering
    key = hashlib.sha256("\0".join(
        [marked, repr(_without_plan_file(options)), repr(variant.shard),
         repr(variant.in_place), repr(sorted(lowering.items())),
         os.path.realpath(library_path()),
         str(os.path.getmtime(library_path()))]).encode()).hexdigest()
    cached = os.path.join(_cache_dir(), f"{prefix}-{key[:24]}.json")
    if os.path.exists(cached):
        with open(cached) as f:
            return json.load(f)
    value = figures(report(marked, options, variant, step.num_inputs,
                           lowering))
    with open(cached + f".{os.getpid()}", "w") as f:
        json.dump(value, f)
    os.replace(cached + f".{os.getpid()}", cached)
    return value


def base_peaks(step, ir, batch_args, spec, counts, variant):
    """The per-rank peak of the default plan for each N in `counts`, and
    what it holds through the loop (each the largest over the ranks):
    --ga-memory-report's total peak, and its `arguments` plus
    `accumulators`, of the step as compiled with every bucket resharded
    (the driver's report target, as _dp_memory.report measures it)."""
    import torch.distributed as dist
    peaks = []
    for n in counts:
        # The data-parallel form of the step (its shard's bounds as
        # arguments) and the driver's options for it.
        marked, options = step._step_options(ir, n, batch_args, spec)
        # Cached beside the libraries (a budget sweep measures each N once).
        peaks.append(_cached_report(
            "shard-base", step, marked, options, variant,
            lambda row: [int(row["total_peak"]),
                         int(row["arguments"]) + int(row["accumulators"])]))
    mine = torch.tensor(peaks, dtype=torch.int64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX, group=step.process_group)
    return [int(p) for p in mine[:, 0]], [int(a) for a in mine[:, 1]]


def loop_profiles(step, ir, batch_args, spec, counts, variant):
    """For each N of `counts`, the points of the default plan's micro-batch
    loop (--ga-memory-report's loop_profile of the step bufferized without
    --ga-share-buffers, whose shared storage would merge the buffers'
    ranges), every rank's: each (bytes live there plus the rank's
    arguments, [(argument, bytes) of each parameter gathered there]), the
    reduce-scatter buffers left out (a deferred bucket has none); none for
    target="cuda". Cached as base_peaks' figures."""
    import torch.distributed as dist
    lowering = dict(step.options, share_buffers=False)
    mine = []
    for n in counts:
        marked, options = step._step_options(ir, n, batch_args, spec)
        if options.target == "cuda":
            # A device step's report has no profile (its buffers are the
            # GPU bufferization's).
            mine.append([])
            continue
        mine.append(_cached_report(
            "shard-profile", step, marked, options, variant,
            lambda row: [[int(row["arguments"]) + b, [list(g) for g in gs]]
                         for b, _, gs in row.get("loop_profile", [])],
            lowering))
    every = [None] * step.world_size
    dist.all_gather_object(every, mine, group=step.process_group)
    return [[(b, [tuple(g) for g in gs]) for rank in every
             for b, gs in rank[i]] for i in range(len(counts))]


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


# New compiles (each a rewrite and a memory report on every rank) the search
# makes before it stops proving: _CAP in order of bytes, then at most
# _FALLBACK descending from the default plan (the choice then not proven
# least); _SMALLEST more for the smallest budget of a refusal.
_CAP = 32
_FALLBACK = 8
_SMALLEST = 16


def _measure(step, ir, batch_args, spec, choice, variant):
    """The per-rank peak (the largest over the ranks) of the step as
    compiled with `choice`: --ga-memory-report's total peak, cached beside
    the libraries as base_peaks' (a budget sweep measures a plan once)."""
    saved, step._choice = step._choice, choice
    try:
        marked, options = step._step_options(
            ir, choice["micro_batches"], batch_args, spec)
        peak = _cached_report("shard-plan-peak", step, marked, options,
                              variant, lambda row: int(row["total_peak"]))
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
        # The plan is chosen before the parameters are cut to this rank's
        # rows (_FSDPTrainStep._variant): a whole one has its own shape.
        p = step._traced.params[r["result"]]
        shape = step._full_shapes.get(p, tuple(p.shape))
        r["rows"] = shape[0] if shape else 0
    return rows




def _spaces(rows, buckets, counts, peaks, resident, world, profiles):
    """The plans at each N of `counts` (_shard_search.Space): the default
    plan's bytes and calls, what it holds through the loop (`resident`:
    arguments and accumulators, the largest over the ranks), each
    decision that saves bytes with what it saves and what it adds to that
    on every rank (a kept bucket's gathered parameters; a deferred
    bucket's full accumulators less the shard accumulators they replace,
    of the most rows a rank holds), and the whole parameters gathered and
    gradients reduce-scattered per micro-batch, each with the decision
    that removes it from the loop; `profiles` (loop_profiles) with each
    gathered argument's decision (None where none saves bytes)."""
    decisions = _decisions(rows, buckets)
    spaces = []
    for n, base, held, profile in zip(counts, peaks, resident, profiles):
        default = _plan(rows, buckets, n, set(), base, world)
        items, transients = [], []
        for d in decisions:
            one = _plan(rows, buckets, n, {d}, base, world)
            members = [rows[a] for a in buckets[d[0]]["arguments"]]
            gather = d[1] == "gather"
            sizes = [r["gathered_bytes"] if gather else r["scattered_bytes"]
                     for r in members if r["gathers_per_micro_batch" if
                                          gather else
                                          "scatters_per_micro_batch"] > 0]
            extra = sum(sizes) if gather else \
                sum(_fewest_extra(r, world) for r in members
                    if r["scatters_per_micro_batch"] > 0)
            saves = one["moved"] < default["moved"]
            if saves:
                items.append((d, default["moved"] - one["moved"],
                              default["calls"] - one["calls"], extra))
            transients += [(d if saves else None, b) for b in sizes]
        gather = {a: (b, "gather") for b, bucket in enumerate(buckets)
                  for a in bucket["arguments"]}
        saving = {i[0] for i in items}
        spaces.append(_shard_search.Space(
            n, default["moved"], default["calls"], held, items, transients,
            [(b, [(gather.get(a) if gather.get(a) in saving else None, g)
                  for a, g in gathered]) for b, gathered in profile]))
    return spaces


def _fewest_extra(row, world):
    """What the full accumulator adds over the shard accumulator on the
    rank of most rows (the least over the ranks: a lower bound's)."""
    size, rows = row["scattered_bytes"], row.get("rows", 0)
    return 0 if rows <= 0 else size - size // rows * (-(-rows // world))


class _Search:
    """The measurements of one fit(): each plan's per-rank peak as
    compiled (the largest over the ranks), the default plans' from
    base_peaks, the new compiles counted, and whether every measured peak
    was at least its lower bound (else nothing ruled out by a bound is
    proven)."""

    def __init__(self, step, ir, batch_args, spec, variant, rows, buckets,
                 spaces, peaks):
        self.step, self.ir, self.batch_args = step, ir, batch_args
        self.spec, self.variant = spec, variant
        self.rows, self.buckets = rows, buckets
        self.base = {s.n: p for s, p in zip(spaces, peaks)}
        self.peaks, self.compiles, self.bound_held = {}, 0, True

    def plan(self, space, taken):
        plan = _plan(self.rows, self.buckets, space.n, set(taken),
                     self.base[space.n], self.step.world_size)
        plan["modelled_peak"] = plan.pop("predicted_peak")
        plan["lower_bound"] = space.bound(taken)
        return plan

    def peak(self, plan):
        key = _key(plan)
        if key not in self.peaks:
            if plan["keep_gathered"] or plan["reduce_after_loop"]:
                self.compiles += 1
                self.peaks[key] = _measure(self.step, self.ir,
                                           self.batch_args, self.spec, plan,
                                           self.variant)
            else:
                self.peaks[key] = self.base[plan["micro_batches"]]
            self.bound_held &= self.peaks[key] >= plan["lower_bound"]
        plan["predicted_peak"] = self.peaks[key]
        return plan["predicted_peak"]


def _first_fit(search, spaces, budget):
    """The first plan in order of bytes moved (then N, calls, the model's
    peak) whose measured peak fits `budget`, among those whose lower bound
    does: (plan, least, over), `least` the fewest bytes any fitting plan
    can move (the plan's own when it is proven the least: every plan of
    fewer bytes measured or bounded over the budget), `over` the plans
    measured over the budget, in order. After _CAP compiles, _descend's
    plan (not proven). No plan fits: (None, None, over)."""
    over, seen = [], 0
    for group in _shard_search.by_bytes(spaces, budget):
        if group is None:
            # The enumeration's own cap (visits): no plan left moves fewer
            # bytes than the last yielded.
            return _descend(search, spaces, budget), seen, over
        seen = group[0][0]
        plans = sorted((search.plan(s, taken) for _, s, taken, _ in group),
                       key=lambda p: (p["moved"], p["micro_batches"],
                                      p["calls"], p["modelled_peak"]))
        for plan in plans:
            if search.compiles >= _CAP and _key(plan) not in search.peaks \
                    and (plan["keep_gathered"] or plan["reduce_after_loop"]):
                return _descend(search, spaces, budget), plan["moved"], over
            if search.peak(plan) <= budget:
                return plan, plan["moved"], over
            over.append(plan)
    return None, None, over


def _descend(search, spaces, budget):
    """A plan that fits when the search stops unproven (None if none does):
    from the default plan of each N that fits (measured: base_peaks), the
    decisions tried in order of bytes saved, each kept when the plan with
    it measures within the budget, at most _FALLBACK compiles in all; the
    fewest bytes of those reached."""
    best, start = None, search.compiles
    for s in sorted(spaces, key=lambda s: (s.moved, s.n)):
        if search.base[s.n] > budget:
            continue
        taken = ()
        for item in sorted(s.items, key=lambda i: -i[1]):
            if search.compiles - start >= _FALLBACK:
                break
            trial = taken + (item[0],)
            plan = search.plan(s, trial)
            if plan["lower_bound"] <= budget and \
                    search.peak(plan) <= budget:
                taken = trial
        plan = search.plan(s, taken)
        search.peak(plan)
        if best is None or (plan["moved"], plan["micro_batches"]) < (
                best["moved"], best["micro_batches"]):
            best = plan
    return best


def _smallest(search, spaces):
    """The least measured peak of any plan: (plan, bound), `bound` the
    least peak any plan can have (the plan's own when proven: every plan
    of a lower bound under it measured, within _SMALLEST further
    compiles)."""
    best, start = None, search.compiles
    for bound, s, taken in _shard_search.by_lower_bound(spaces):
        if best is not None and bound >= best["predicted_peak"]:
            break
        plan = search.plan(s, taken)
        if best is not None and plan["lower_bound"] >= best["predicted_peak"]:
            continue
        if search.compiles - start >= _SMALLEST and _key(plan) not in \
                search.peaks and (plan["keep_gathered"] or
                                  plan["reduce_after_loop"]):
            return best, bound
        search.peak(plan)
        if best is None or (plan["predicted_peak"], plan["moved"]) < (
                best["predicted_peak"], best["moved"]):
            best = plan
    return best, best["predicted_peak"]


def fit(step, ir, batch_args, spec, counts, peaks, resident, max_memory,
        variant):
    """The plan of fewest bytes moved (then smallest N, fewest collectives)
    whose per-rank peak as compiled fits the budget, as
    --ga-choose-micro-batches chooses N: the plans (N among `counts`, each
    bucket kept gathered or not, reduced after the loop or not; a decision
    that saves no bytes is not taken) in order of bytes moved
    (_shard_search.by_bytes, lazily), each whose lower bound fits measured
    (--ga-memory-report of the step as compiled with it, the largest over
    the ranks) until the first that fits. A plan measured over the budget
    rules out no other: the peak is not monotone in the decisions (keeping
    a bucket gathered can lower it: one copy through the loop instead of
    the forward's and the backward's re-gathers; with buffers shared, two
    decisions can fit where one alone does not); only a lower bound over
    the budget does (`resident`: what the default plan holds through the
    loop at each N, its arguments and accumulators, the largest over the
    ranks). `proven_least` says whether the choice is
    the least (every cheaper plan measured or bounded over the budget, and
    every measured peak at least its bound); else `least_bytes` is the
    fewest bytes any fitting plan can move (_CAP compiles reached). The
    choice records the plan of the next fewer bytes (`next_cheaper`) and
    how many plans were compiled. None fits: CompileError (budget-not-met)
    naming the least peak of all the plans (proven least, or the least
    measured, with the bound below which none peaks)."""
    choice = choose(step, ir, batch_args, spec, counts, peaks, None)
    if max_memory is None:
        return choice
    rows = _rows(step, choice)
    buckets = [{"arguments": b["arguments"], "results": b["results"],
                "bytes": b["bytes"]} for b in choice["buckets"]]
    budget = budget_bytes(max_memory)
    spaces = _spaces(rows, buckets, counts, peaks, resident,
                     step.world_size, loop_profiles(
                         step, ir, batch_args, spec, counts, variant))
    search = _Search(step, ir, batch_args, spec, variant, rows, buckets,
                     spaces, peaks)
    plan, least, over = _first_fit(search, spaces, budget)
    if plan is None and least is not None:
        # Stopped unproven and the descent found none: the least peak
        # measured may still fit.
        search.smallest = _smallest(search, spaces)
        plan = search.smallest[0]
        plan = plan if plan["predicted_peak"] <= budget else None
    if plan is not None:
        least = min(least, plan["moved"])
        over = [p for p in over if p["moved"] < plan["moved"]]
        over = over[-1] if over else None
        plan.update(budget=budget, candidates=choice["candidates"],
                    measured_plans=search.compiles,
                    proven_least=least == plan["moved"] and
                    search.bound_held,
                    least_bytes=least, next_cheaper={
                        k: over[k] for k in (
                            "micro_batches", "keep_gathered",
                            "reduce_after_loop", "moved", "calls")}
                    if over else None)
        return plan
    least_plan, floor = getattr(search, "smallest", None) or \
        _smallest(search, spaces)
    peak = least_plan["predicted_peak"]
    exact = floor == peak and search.bound_held
    said = (f"the smallest per-rank peak of the plans (N = "
            f"{least_plan['micro_batches']}, {least_plan['moved']} bytes "
            f"moved per step) is {peak} bytes; a per-rank budget of at "
            f"least {peak} bytes fits") if exact else (
        f"the smallest per-rank peak measured ({search.compiles} plans "
        f"compiled; N = {least_plan['micro_batches']}, "
        f"{least_plan['moved']} bytes moved per step) is {peak} bytes, "
        f"not proven the least (none peaks under {floor} bytes); a "
        f"per-rank budget of {peak} bytes fits")
    error = CompileError(
        f"compile_train_step: no sharded-parameter plan fits "
        f"max_memory={max_memory} per rank: {said}", code="budget-not-met")
    error.smallest_budget, error.proven_least = peak, exact
    raise error
