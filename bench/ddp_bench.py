#!/usr/bin/env python3
"""Collectives and time per step of data-parallel training with torchrun:
ga_mlir.torch's compiled step (compile_train_step inside the process group)
against PyTorch's DistributedDataParallel, with and without no_sync.

Each of the 2 (--procs) gloo processes holds --batch samples per step, split
into N micro-batches (--micro-batches). The model is an MLP
IN x HIDDEN x HIDDEN x 10 with AdamW and cross-entropy.

* ours: one call of the compiled step per effective step.
* ours ZeRO-1: the same with shard_optimizer=True (gradients
  reduce-scattered, each rank updating its rows of the parameters and
  keeping its rows of the AdamW state, parameters all-gathered); the
  optimizer state per rank is printed next to the unsharded one.
* DDP: N forward/backward passes of B/N samples (loss scaled by 1/N, as
  gradient accumulation with DDP is written), then optimizer.step(); DDP
  all-reduces every bucket after every backward.
* DDP no_sync: the first N - 1 backward passes inside `model.no_sync()`,
  so DDP all-reduces once per bucket per step.

Collectives are counted on the same footing: ours by the runtime's callback
(one call of dist.all_reduce per bucket), DDP's by a communication hook
(one call per bucket). Time: the mean over --steps steps after two warm-up
steps, measured on rank 0 (CPU, OMP/BLAS on one thread per process).

    python3 bench/ddp_bench.py              # spawns torchrun itself
"""
import argparse
import os
import subprocess
import sys
import time


def worker(args):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    from ga_mlir.torch import compile_train_step

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)

    def make_model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(args.inputs, args.hidden), nn.ReLU(),
                             nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                             nn.Linear(args.hidden, 10))

    g = torch.Generator().manual_seed(1 + rank)
    x = torch.randn(args.batch, args.inputs, generator=g)
    y = torch.randint(0, 10, (args.batch,), generator=g)
    n = args.micro_batches

    def loss_fn(model, x, y):
        return F.cross_entropy(model(x), y)

    def timed(step, reset=lambda: None):
        for _ in range(2):
            step()
        reset()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        dist.barrier()
        return (time.perf_counter() - start) / args.steps * 1e3

    results = {}
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ours = compile_train_step(model, loss_fn, opt, (x, y), micro_batches=n,
                              bucket_cap_mb=args.bucket_cap_mb)
    ms = timed(lambda: ours(x, y))
    results["ours"] = (ours.collectives_per_call()[0], ms)

    def state_bytes(opt):
        return sum(t.numel() * t.element_size()
                   for state in opt.state.values() for t in state.values()
                   if isinstance(t, torch.Tensor) and t.dim() > 0)
    full_state = state_bytes(opt)
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    zero = compile_train_step(model, loss_fn, opt, (x, y), micro_batches=n,
                              bucket_cap_mb=args.bucket_cap_mb,
                              shard_optimizer=True)
    ms = timed(lambda: zero(x, y))
    results["ours ZeRO-1"] = (zero.collectives_per_call()[0], ms)
    zero_state = state_bytes(opt)

    for no_sync in (False, True):
        model = DDP(make_model(), bucket_cap_mb=args.bucket_cap_mb)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        calls = [0]

        def hook(state, bucket):
            calls[0] += 1
            fut = dist.all_reduce(bucket.buffer(), async_op=True)
            return fut.get_future().then(
                lambda f: f.value()[0] / dist.get_world_size())
        model.register_comm_hook(None, hook)

        def step():
            for i, (xs, ys) in enumerate(zip(x.chunk(n), y.chunk(n))):
                if no_sync and i < n - 1:
                    with model.no_sync():
                        (loss_fn(model, xs, ys) / n).backward()
                else:
                    (loss_fn(model, xs, ys) / n).backward()
            opt.step()
            opt.zero_grad()
        # Counted over the timed steps: DDP rebuilds its buckets in the
        # order of the first step's gradients.
        ms = timed(step, lambda: calls.__setitem__(0, 0))
        results["DDP no_sync" if no_sync else "DDP"] = (
            calls[0] / args.steps, ms)

    if rank == 0:
        params = sum(p.numel() for p in make_model().parameters())
        print(f"{dist.get_world_size()} processes (gloo), MLP "
              f"{args.inputs}x{args.hidden}x{args.hidden}x10 ({params:,} "
              f"parameters), {args.batch} samples per process per step, "
              f"N = {n}, bucket_cap_mb = {args.bucket_cap_mb}")
        print(f"AdamW state on rank 0: {full_state:,} bytes unsharded, "
              f"{zero_state:,} bytes with ZeRO-1 "
              f"({zero_state / full_state:.3f} of it)")
        print("| variant | collectives per step | ms per step |")
        print("|---|---|---|")
        for name, (count, ms) in results.items():
            print(f"| {name} | {count:g} | {ms:.1f} |")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--inputs", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--bucket-cap-mb", type=float, default=25)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    if "RANK" in os.environ:
        return worker(args)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.call(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         f"--nproc_per_node={args.procs}", os.path.abspath(__file__)] +
        sys.argv[1:], env=env)


if __name__ == "__main__":
    sys.exit(main())
