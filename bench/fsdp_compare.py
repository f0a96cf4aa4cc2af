"""Sharded parameters with gradient accumulation: ga-mlir's
`shard="parameters"` step against PyTorch's FSDP2 (`fully_shard`) on the
same model, batch and number of micro-batches, over gloo on the CPU.

    python -m torch.distributed.run --standalone --nproc_per_node=2 \\
        bench/fsdp_compare.py [--layers 4] [--width 256] [--batch 32]
        [--micro-batches 4] [--json FILE]

Every rank builds the same model (a stack of Linear + GELU layers, AdamW,
cross-entropy) and global batch from seeds and trains on its rows. Points:

- ga-mlir without a budget (every bucket resharded after use, FSDP's
  default), with budgets 1/2, 3/4 and 7/8 of the way from that plan's peak
  to the ample plan's (each as compiled), and with an ample one (buckets
  kept gathered, gradients reduced once after the loop);
- FSDP2 with its standard settings: `reshard_after_forward` True or False,
  times gradient sync on every micro-batch or only on the last
  (`set_requires_gradient_sync`).

For each: bytes this rank sends per step (counted where the collectives are
called: ga-mlir's collective layer; for FSDP2 `torch.distributed`'s
`all_gather_single` / `reduce_scatter_single` wrapped), the number of
collective calls, the per-rank peak measured by the runtime's heap counter
(libGAHeapCount.so preloaded: what the rank holds between steps — its
parameters' shards and optimizer state, and for ga-mlir the step's static
storage — plus the heap's growth during the second step; the same counter
for both), and the
error of the parameters against PyTorch's single-process full-batch step.
gloo's own buffers allocate in the same heap, so the measured peaks carry
its noise (tens of KiB) for both alike; ga-mlir's predicted peak is printed
beside it. Rank 0 prints the table and, per FSDP2 setting, whether one of
ga-mlir's points is no worse on both peak and bytes and strictly better on
one (the goal of issue #44's benchmark).
"""
import argparse
import copy
import json
import os
import sys

from ga_mlir import steplib

steplib.preload_heap_counter()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ga_mlir.torch import compile_train_step  # noqa: E402

torch.set_num_threads(1)
COUNTER = steplib.HeapCounter()
CLASSES = 16


class Stack(nn.Module):
    """Linear + GELU layers, a classifier head: FSDP2 shards each layer as
    a unit, ga-mlir buckets per parameter."""

    def __init__(self, layers, width):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Linear(width, width) for _ in range(layers))
        self.head = nn.Linear(width, CLASSES)

    def forward(self, x):
        for layer in self.layers:
            x = F.gelu(layer(x))
        return self.head(x)


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def make_case(args):
    torch.manual_seed(0)
    model = Stack(args.layers, args.width)
    x = torch.randn(args.batch, args.width)
    y = torch.randint(0, CLASSES, (args.batch,))
    return model, x, y


def make_opt(params):
    return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)


def reference(model, x, y, steps):
    """PyTorch's single-process step on the whole global batch."""
    ref = copy.deepcopy(model)
    opt = make_opt(ref.parameters())
    for _ in range(steps):
        loss_fn(ref, x, y).backward()
        opt.step()
        opt.zero_grad()
    return {n: p.detach().clone() for n, p in ref.named_parameters()}


def relative(full, ref):
    return max(float((full[n] - r).norm() / r.norm().clamp_min(1e-30))
               for n, r in ref.items())


class Wire:
    """Counts FSDP2's collectives where torch.distributed is called: the
    bytes this rank sends (ring algorithms: (W - 1) / W of the whole
    tensor), as ga-mlir's collective layer counts its own."""

    def __init__(self, world):
        self.calls = self.sent = 0
        for name, sent in (("all_gather_single",
                            lambda out, inp: inp.nbytes * (world - 1)),
                           ("reduce_scatter_single",
                            lambda out, inp: inp.nbytes - out.nbytes)):
            self._wrap(name, sent)

    def _wrap(self, name, sent):
        original = getattr(dist, name)

        def counted(output, input, *args, **kwargs):
            self.calls += 1
            self.sent += sent(output, input)
            return original(output, input, *args, **kwargs)
        setattr(dist, name, counted)


def state_bytes(model, opt):
    """What a rank holds between steps: its parameters (a DTensor's local
    shard) and optimizer state."""
    local = [p.to_local() if hasattr(p, "to_local") else p
             for p in model.parameters()]
    return sum(t.nbytes for t in local) + sum(
        t.nbytes for s in opt.state.values() for t in s.values()
        if torch.is_tensor(t))


def measure(run, held):
    """FSDP2's per-rank peak: what the rank holds between steps (`held`)
    plus the heap's growth during `run()`."""
    COUNTER.reset_peak()
    live = COUNTER.live()
    run()
    return held + COUNTER.peak() - live


def ours(args, rank, world, budget, steps=2):
    model, x, y = make_case(args)
    ref = reference(model, x, y, steps)
    per = args.batch // world
    local = (x[rank * per:(rank + 1) * per].contiguous(),
             y[rank * per:(rank + 1) * per].contiguous())
    opt = make_opt(model.parameters())
    step = compile_train_step(model, loss_fn, opt, local,
                              micro_batches=args.micro_batches,
                              max_memory=budget, shard="parameters",
                              share_buffers=True)
    step(*local)
    _, peak = COUNTER.step_peak(step, lambda: step(*local),
                                state_bytes(model, opt))
    # The collective layer's counts of the last call.
    counts = step._collectives.sharded_counts.values()
    calls, sent = sum(c[0] for c in counts), sum(c[2] for c in counts)
    plan = step.shard_plan()
    return dict(calls=calls, sent=sent, peak=peak,
                predicted_peak=plan.get("predicted_peak",
                                        step.memory_report()["total_peak"]),
                modelled_peak=plan.get("modelled_peak"),
                error=relative(step.full_state_dict(), ref)), plan


def fsdp2(args, rank, world, reshard, sync_every, wire, steps=2):
    from torch.distributed.fsdp import fully_shard
    model, x, y = make_case(args)
    ref = reference(model, x, y, steps)
    for layer in model.layers:
        fully_shard(layer, reshard_after_forward=reshard)
    fully_shard(model, reshard_after_forward=reshard)
    opt = make_opt(model.parameters())
    per = args.batch // world
    xs = x[rank * per:(rank + 1) * per].chunk(args.micro_batches)
    ys = y[rank * per:(rank + 1) * per].chunk(args.micro_batches)

    def one_step():
        for i, (xi, yi) in enumerate(zip(xs, ys)):
            last = i == len(xs) - 1
            model.set_requires_gradient_sync(sync_every or last)
            # The mean over the rank's rows: micro-batches of equal size,
            # FSDP2 averages over the ranks.
            (loss_fn(model, xi, yi) * (xi.shape[0] / per)).backward()
        opt.step()
        opt.zero_grad()

    one_step()
    calls, sent = wire.calls, wire.sent
    peak = measure(one_step, state_bytes(model, opt))
    full = {n: p.full_tensor().detach() for n, p in model.named_parameters()}
    return dict(calls=wire.calls - calls, sent=wire.sent - sent, peak=peak,
                predicted_peak=None, modelled_peak=None,
                error=relative(full, ref))


def dominates(a, b):
    """a no worse than b on peak and bytes, strictly better on one."""
    return (a["peak"] <= b["peak"] and a["sent"] <= b["sent"]
            and (a["peak"] < b["peak"] or a["sent"] < b["sent"]))


def model_parser():
    """The options of the model and its step (fsdp_plan_search's too)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--micro-batches", type=int, default=4)
    return parser


def main():
    parser = model_parser()
    parser.add_argument("--json")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if not COUNTER.active:
        sys.exit("fsdp_compare: libGAHeapCount.so is not preloaded")
    if args.batch % (world * args.micro_batches):
        sys.exit("fsdp_compare: --batch must split evenly over ranks and "
                 "micro-batches (FSDP2's loop here takes equal chunks)")
    rows = {}
    rows["ga-mlir resharded"], _ = ours(args, rank, world, None)
    _, ample = ours(args, rank, world, "64GiB")
    # The default plan's peak at this N: every bucket resharded.
    smallest = dict(ample["candidates"])[args.micro_batches]
    # Budgets between every bucket resharded and the ample plan's peak as
    # compiled: 1/2, 3/4 and 7/8 of the way (the planner measures the plans
    # in order of bytes moved and takes the first that fits; the plan that
    # keeps the bucket gathered peaks about 4/5 of the way).
    budgets = {"ga-mlir budget ample": "64GiB"}
    for num, den in ((1, 2), (3, 4), (7, 8)):
        budgets[f"ga-mlir budget {num}/{den} of the way"] = \
            smallest + (ample["predicted_peak"] - smallest) * num // den
    for name, budget in budgets.items():
        rows[name], _ = ours(args, rank, world, budget)
    wire = Wire(world)
    for reshard in (True, False):
        for sync_every in (True, False):
            name = (f"FSDP2 reshard_after_forward={reshard} "
                    f"sync={'every' if sync_every else 'last'}")
            rows[name] = fsdp2(args, rank, world, reshard, sync_every, wire)
    gathered = [None] * world
    dist.all_gather_object(gathered, rows)
    if rank == 0:
        report(args, world, gathered)
    dist.destroy_process_group()


def report(args, world, gathered):
    params = args.layers * (args.width + 1) * args.width + \
        (args.width + 1) * CLASSES
    print(f"{params} parameters, {world} ranks, global batch {args.batch}, "
          f"N = {args.micro_batches}; per rank: the largest of the ranks")
    print(f"{'point':44} {'calls':>5} {'sent B':>10} {'peak B':>10} "
          f"{'predicted':>10} {'modelled':>10} {'error':>8}")
    rows = {}
    for name in gathered[0]:
        per_rank = [g[name] for g in gathered]
        rows[name] = row = dict(per_rank[0])
        for key in ("calls", "sent", "peak", "error"):
            row[key] = max(r[key] for r in per_rank)
        predicted, modelled = row["predicted_peak"], row["modelled_peak"]
        print(f"{name:44} {row['calls']:5} {row['sent']:10} "
              f"{row['peak']:10} {predicted if predicted else '-':>10} "
              f"{modelled if modelled else '-':>10} {row['error']:8.1e}")
    for name, theirs in rows.items():
        if name.startswith("FSDP2"):
            better = [n for n, r in rows.items()
                      if n.startswith("ga-mlir") and dominates(r, theirs)]
            print(f"{name}: dominated by {', '.join(better) or 'none'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
