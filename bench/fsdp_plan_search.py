"""The sharded-parameter planner's search under budgets (_shard_plan.fit):
per budget the bytes of the choice, whether it is proven the least, the
fewest bytes any fitting plan can move (`least_bytes`), the plans compiled,
and how far the lower bound lies under each measured peak.

    python -m torch.distributed.run --standalone --nproc_per_node=2 \\
        bench/fsdp_plan_search.py [--layers 4] [--width 256] [--batch 32]
        [--micro-batches 4] [--fractions 0.25,0.5,0.75] [--every-plan]

bench/fsdp_compare.py's model (Linear + GELU layers, a 16-class head,
AdamW), a bucket a layer (weight and bias), N fixed; the budgets lie at
each fraction of the way from the default plan's peak (every bucket
resharded) to the ample plan's (every bucket kept and reduced after the
loop). Rank 0 prints a line a budget. With --every-plan, every plan is
compiled instead and its lower bound compared with its peak (one line).
"""
import copy
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsdp_compare  # noqa: E402

from ga_mlir.torch import CompileError, compile_train_step  # noqa: E402
from ga_mlir.torch import _shard_plan  # noqa: E402


def main():
    parser = fsdp_compare.model_parser()
    parser.add_argument("--fractions", default="0.25,0.5,0.75")
    # Every plan of every N compiled once (under the ample budget) and its
    # lower bound compared with its peak: for small stacks (4^buckets
    # plans), e.g. --layers 2 --width 64.
    parser.add_argument("--every-plan", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    # Every measured plan's lower bound and peak, read where fit measures.
    pairs = []
    measure = _shard_plan._Search.peak

    def recorded(search, plan):
        peak = measure(search, plan)
        pairs.append((plan["lower_bound"], peak))
        return peak

    _shard_plan._Search.peak = recorded
    if args.every_plan:
        first_fit = _shard_plan._first_fit

        def every_plan(search, spaces, budget):
            for s in spaces:
                for mask in range(1 << len(s.items)):
                    search.peak(search.plan(s, [
                        i[0] for k, i in enumerate(s.items) if mask >> k & 1]))
            return first_fit(search, spaces, budget)

        _shard_plan._first_fit = every_plan
    model0, x, y = fsdp_compare.make_case(args)
    rows = args.batch // world
    local = (x[rank * rows:(rank + 1) * rows],
             y[rank * rows:(rank + 1) * rows])
    layer_mb = (args.width + 1) * args.width * 4 / (1 << 20)

    def compile_at(budget):
        model = copy.deepcopy(model0)
        began = time.monotonic()
        step = compile_train_step(
            model, fsdp_compare.loss_fn,
            fsdp_compare.make_opt(model.parameters()), local,
            micro_batches=args.micro_batches, max_memory=budget,
            shard="parameters", bucket_cap_mb=layer_mb)
        return step.shard_plan(), time.monotonic() - began

    ample, _ = compile_at("1GiB")
    if args.every_plan:
        slack = [p - b for b, p in pairs]
        if rank == 0:
            print(f"every plan: {len(pairs)} compiled, bound under the peak "
                  f"by {min(slack)} to {max(slack)} bytes, "
                  f"{sum(s < 0 for s in slack)} over", flush=True)
        dist.destroy_process_group()
        return
    default = ample["candidates"][0][1]
    for fraction in (float(f) for f in args.fractions.split(",")):
        budget = int(default + fraction * (ample["predicted_peak"] -
                                           default))
        pairs.clear()
        try:
            plan, seconds = compile_at(budget)
            said = (f"bytes {plan['predicted_bytes']} least_bytes "
                    f"{plan['least_bytes']} (ratio "
                    f"{plan['predicted_bytes'] / plan['least_bytes']:.2f}) "
                    f"proven {plan['proven_least']} compiled "
                    f"{plan['measured_plans']} peak "
                    f"{plan['predicted_peak']} {seconds:.0f} s")
        except CompileError as error:
            said = f"refused: {error}"
        if rank == 0:
            slack = [p - b for b, p in pairs]
            print(f"budget {budget} ({fraction:.2f} of default {default} "
                  f"to ample {ample['predicted_peak']}, ample bytes "
                  f"{ample['predicted_bytes']}): {said}; bound under the "
                  f"peak by {min(slack)} to {max(slack)} bytes, "
                  f"{sum(s < 0 for s in slack)} over", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
