"""What every rank of the sharded-parameter budget tests runs (under
`python -m torch.distributed.run --standalone --nproc_per_node=K`, gloo,
libGAHeapCount.so preloaded by re-executing itself).

    fsdp_budget_worker.py CASE --shards 5,3

shard="parameters" with max_memory, N fixed at the smallest shard's
samples, two buckets (BUCKET_MB: a layer each; 16 plans, every one
measured by the planner). The budgets come from the plan itself: an ample
one, the smallest (named by the refusal of a budget of one byte: the
least peak of all the plans), and one halfway between the two plans'
peaks. For each: two steps on the rank's shard
against PyTorch's single-process full-batch step (dp_worker.reference), bit
for bit the same on every rank; the collectives counted per step by the
collective layer (calls and bytes of the whole tensors) against the plan's
prediction; the plan's predicted per-rank peak, which must bound this
rank's step as compiled (its --ga-memory-report total peak) and lie within
the budget; the plan of the next fewer bytes (the planner's next_cheaper),
compiled anew here, over the budget. The heap measured during a call
(arguments, the heap's growth, the static storage) is printed, not
checked: the host collectives run through torch.distributed, whose gloo
buffers and threads allocate in the same heap while the step runs (tens
to hundreds of KiB here, more than the step's own ~10 KiB), so it does not
measure the step. A budget one byte under the smallest
is refused (budget-not-met) naming that smallest budget. Each rank prints
one line per budget; rank 0 the three plans.
"""
import argparse
import os
import re
import sys

from ga_mlir import steplib

steplib.preload_heap_counter()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_worker import TOLERANCE, compare, say, sharded_case  # noqa: E402

from ga_mlir.torch import CompileError, compile_train_step  # noqa: E402
from ga_mlir.torch._dp_memory import report  # noqa: E402

torch.set_num_threads(1)
COUNTER = steplib.HeapCounter()
# Two buckets of the MLP (its first layer's 704 bytes, then its head's
# 272): three N, 16 plans each, every one measurable by the planner.
BUCKET_MB = 734 / (1 << 20)


def measured_peak(step, model, opt, local):
    """One call's peak: the arguments (this rank's parameters and state,
    its samples), the heap's growth during the call, the static storage."""
    arguments = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for s in opt.state.values() for t in s.values()
        if torch.is_tensor(t)) + sum(t.nbytes for t in local)
    return COUNTER.step_peak(step, lambda: step(*local), arguments)


def next_cheaper_peak(step, plan):
    """The per-rank peak (the largest over the ranks) of the plan that
    moves the most bytes among those that move fewer than the chosen one
    (the planner's `next_cheaper`), compiled here anew and measured by
    --ga-memory-report, not read from the planner's cache; None when the
    chosen plan moves the fewest."""
    cheaper = plan.get("next_cheaper")
    if cheaper is None:
        return None
    v = next(iter(step._variants.values()))
    saved, step._choice = step._choice, cheaper
    try:
        marked, options = step._step_options(
            v.ir, cheaper["micro_batches"], v.batch_args, v.spec)
        row = report(marked, options, v, step.num_inputs, step.options)
    finally:
        step._choice = saved
    largest = torch.tensor([int(row["total_peak"])], dtype=torch.int64)
    dist.all_reduce(largest, op=dist.ReduceOp.MAX)
    return int(largest)


def run_budget(name, shards, rank, budget, steps=2):
    model, make_opt, loss_fn, max_norm, ref_model, _, ref_losses, local = \
        sharded_case(name, shards, rank, steps)
    opt = make_opt(model)
    # N fixed at the smallest shard's samples: at N = 1 the least traffic
    # (1 all-gather and 1 reduce-scatter a parameter) has the least peak as
    # well, so no budget would trade bytes for memory.
    step = compile_train_step(model, loss_fn, opt, local, max_memory=budget,
                              micro_batches=min(shards),
                              max_grad_norm=max_norm, shard="parameters",
                              bucket_cap_mb=BUCKET_MB)
    losses, peaks = [], []
    for _ in range(steps):
        loss, peak = measured_peak(step, model, opt, local)
        losses.append(loss)
        peaks.append(peak)
    full = step.full_state_dict()
    err, loss_err, same = compare(
        [full[n] for n, _ in model.named_parameters()], ref_model, losses,
        ref_losses)
    plan = step.shard_plan()
    counts = step._collectives.sharded_counts
    calls = counts["all_gather"][0] + counts["reduce_scatter"][0]
    moved = counts["all_gather"][1] + counts["reduce_scatter"][1]
    # The peak of the second call (the first creates the optimizer state).
    peak = peaks[-1]
    # This rank's step as compiled (--ga-memory-report of the chosen plan)
    # within the predicted per-rank peak, itself within the budget, and the
    # largest over the ranks equal to it.
    static = step.memory_report()["total_peak"]
    # The prediction is the compiled step's static peak on the rank that
    # holds the most (every rank gets the same plan).
    largest = torch.tensor([static], dtype=torch.int64)
    dist.all_reduce(largest, op=dist.ReduceOp.MAX)
    fits = static <= plan["predicted_peak"] <= plan["budget"] and \
        int(largest) == plan["predicted_peak"]
    # The least traffic that fits: the plan of the next fewer bytes does
    # not fit (measured anew), and moves fewer bytes.
    cheaper = next_cheaper_peak(step, plan)
    least = cheaper is None or (
        cheaper > plan["budget"] and
        plan["next_cheaper"]["moved"] < plan["predicted_bytes"])
    ok = err <= TOLERANCE and loss_err <= TOLERANCE and same and \
        (calls, moved) == (plan["predicted_calls"],
                           plan["predicted_bytes"]) and fits and least
    say(f"rank {rank} {name} budget {budget}: N={plan['micro_batches']} "
        f"params {err:.1e} loss {loss_err:.1e} same-as-rank-0 {same} "
        f"collectives {calls} bytes {moved} predicted "
        f"{plan['predicted_calls']} {plan['predicted_bytes']} peak: "
        f"compiled {static} largest {int(largest)} predicted "
        f"{plan['predicted_peak']} modelled {plan['modelled_peak']} "
        f"heap-measured {peak} plans-measured {plan.get('measured_plans')} "
        f"next-cheaper {(plan['next_cheaper'] or {}).get('moved')} peak "
        f"{cheaper} {'OK' if ok else 'FAIL'}")
    return ok, plan


def describe(plan):
    return f"N={plan['micro_batches']} " + " ".join(
        f"{b['parameters'][0]}:{b['gathered'][:4]}/{b['reduced'][:5]}"
        for b in plan["buckets"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case")
    parser.add_argument("--shards", default="5,3")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    shards = [int(s) for s in args.shards.split(",")]
    assert COUNTER.active, "libGAHeapCount.so is not preloaded"
    ok, ample = run_budget(args.case, shards, rank, "1GiB")
    # The smallest per-rank budget, as the refusal of a budget of one byte
    # names it (the least peak of every plan, each measured).
    try:
        run_budget(args.case, shards, rank, 1)
        ok, smallest = False, ample["predicted_peak"]
    except CompileError as error:
        found = re.search(r"at least (\d+) bytes fits", str(error))
        ok &= error.code == "budget-not-met" and found is not None
        smallest = int(found.group(1)) if found else ample["predicted_peak"]
    # Halfway between the smallest budget and the ample plan's peak as
    # compiled.
    middle = (smallest + ample["predicted_peak"]) // 2
    plans = [ample]
    for budget in (middle, smallest):
        good, plan = run_budget(args.case, shards, rank, budget)
        ok &= good
        plans.append(plan)
    distinct = len({describe(p) for p in plans})
    # A larger budget never moves more bytes (ample, middle, smallest).
    monotone = all(a["predicted_bytes"] <= b["predicted_bytes"]
                   for a, b in zip(plans, plans[1:]))
    # The smallest budget's plan peaks at it exactly.
    ok &= distinct >= 2 and monotone and \
        plans[-1]["predicted_peak"] == smallest
    if rank == 0:
        for label, plan in zip(("ample", "middle", "smallest"), plans):
            say(f"plan {label}: {describe(plan)} bytes "
                f"{plan['predicted_bytes']} peak {plan['predicted_peak']}")
    # One byte less than the smallest: refused, naming the smallest.
    try:
        run_budget(args.case, shards, rank, smallest - 1)
        refused = "not refused"
    except CompileError as error:
        refused = f"refused {error.code} names-smallest " \
            f"{f'{smallest} bytes' in str(error)}"
        ok &= error.code == "budget-not-met" and \
            f"{smallest} bytes" in str(error)
    say(f"rank {rank} distinct plans {distinct} bytes-monotone {monotone}; "
        f"budget smallest-1 "
        f"{refused}")
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
