#!/usr/bin/env python3
# ===- dp_step.py - the GPU kit's torch data-parallel step -----------------===#
#
# The kit's data-parallel check of the PyTorch frontend: a target="cuda"
# step compiled inside a torch.distributed process group and saved with
# its data-parallel contract (step.save; docs/Distributed.md), run on the
# GPU machine under
#
#   python -m torch.distributed.run --standalone --nproc_per_node=1 \
#       dp_step.py --kit KIT --rows ROWS.json
#
# with the NCCL backend (one GPU: a world of one rank, whose global batch is
# its own): load_step binds the saved step to the process group, its
# gradient buckets' all-reduces (gaNcclAllReduce in the compiled step) are
# forwarded by libGANcclRuntime.so to torch.distributed.all_reduce on the
# step's communication stream. One step is compared with PyTorch's own
# full-batch step (the zoo model's reference.pt), and the collectives per
# step are counted (the frontend's count and the runtime's
# gaNcclAllReduceCalls).
#
# Here (the build, see build_kit.py): build(...) compiles the step in a
# gloo group of one process (the library does not depend on the world size
# or the backend) into KIT/dp/<model>. There, run_kit.py starts the torchrun
# above (run_data_parallel) and formats its rows: this child imports
# run_kit's helpers, run_kit never imports it.
#
# ===----------------------------------------------------------------------===#

import argparse
import ctypes
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4  # micro-batches of the saved step

# The saved variants of each model, by the suffix of their directory (and
# manifest entry): the deferred all-reduce step, and the shard="parameters"
# step (issue #44), whose all-gathers and reduce-scatters NCCL runs (a world
# of one rank: each collective copies the rank's own rows, so the numerics
# are the full-batch step's and the count says they ran).
VARIANTS = {"": {}, ".sharded": {"shard": "parameters"}}


# ===------------------------------------------------------------------===#
# Build (here: torch, torch-mlir, no GPU)
# ===------------------------------------------------------------------===#

def build(kit, models, log):
    """Compiles the data-parallel target="cuda" step of each zoo model of
    the kit (its init.pt and batch.pt) in a gloo group of one process and
    saves it into kit/dp/<model>. Returns the models."""
    import torch
    import torch.distributed as dist
    import kit_models
    from ga_mlir.torch import compile_train_step
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0,
                            world_size=1)
    entries = []
    try:
        for name in models:
            model, loss_fn, _ = kit_models.make(name)
            zoo = os.path.join(kit, "zoo", name)
            model.load_state_dict(torch.load(os.path.join(zoo, "init.pt")))
            batch = torch.load(os.path.join(zoo, "batch.pt"))
            options = {"accumulator_type": "f32"} \
                if name in ("gpt", "gpt-moe") else {}
            init = {k: v.clone() for k, v in model.state_dict().items()}
            saved = []
            for variant, extra in VARIANTS.items():
                model.load_state_dict(init)
                step = compile_train_step(
                    model, loss_fn, kit_models.optimizer_for(model), batch,
                    micro_batches=N, target="cuda", **options, **extra)
                step.save(os.path.join(kit, "dp", name + variant))
                saved.append(name + variant)
                how = ", ".join(f"{k}={v!r}" for k, v in extra.items())
                log(f"dp {name + variant}: N={N} compiled data-parallel for "
                    f"the GPU (torch.distributed, {how or 'all-reduce'}) "
                    f"and saved")
            entries += saved
    finally:
        dist.destroy_process_group()
    return entries


# ===------------------------------------------------------------------===#
# Run (the GPU machine: torch with CUDA and NCCL, no LLVM)
# ===------------------------------------------------------------------===#

def _nccl_calls(step_dir):
    """gaNcclAllReduceCalls of the NCCL runtime the step uses: the copy the
    frontend loaded once per process (every later step binds to that soname;
    the copy beside another model's step, opened by its path, would be a
    second instance with its own counter)."""
    from ga_mlir.torch import _dp_collectives
    lib = _dp_collectives._runtimes.get("libGANcclRuntime.so") or \
        ctypes.CDLL(os.path.join(step_dir, "libGANcclRuntime.so"))
    lib.gaNcclAllReduceCalls.restype = ctypes.c_int64
    lib.gaNcclShardedCalls.restype = ctypes.c_int64
    return lib.gaNcclAllReduceCalls() + lib.gaNcclShardedCalls()


def check_model(kit, entry, torch, dist):
    import kit_models
    import run_kit
    from ga_mlir.torch import load_step
    row = {"kind": "dp", "model": entry, "N": N,
           "world": dist.get_world_size(), "backend": dist.get_backend()}
    step_dir = os.path.join(kit, "dp", entry)
    name = entry.split(".")[0]
    try:
        model, _, opt, batch = run_kit.fresh(kit, name, torch, kit_models)
        ref = torch.load(os.path.join(kit, "zoo", name, "reference.pt"))
        rank, world = dist.get_rank(), dist.get_world_size()
        shard = tuple(t.tensor_split(world)[rank].contiguous()
                      for t in batch)
        step = load_step(step_dir, model, opt)
        row["step"] = type(step).__name__
        before = _nccl_calls(step_dir)
        loss = step(*shard).item()
        torch.cuda.synchronize()
        # All-reduces, and the sharded steps' all-gathers and
        # reduce-scatters, as the frontend forwarded them.
        sharded = getattr(step._collectives, "sharded_counts", {})
        row["collectives"] = step.collectives_per_call()[0] + sum(
            c[0] for c in sharded.values())
        row["nccl_calls"] = _nccl_calls(step_dir) - before
        tol = 2e-2 if name in ("gpt", "gpt-moe") else 1e-4
        row["loss_error"] = abs(loss - ref["pytorch_loss"]) / abs(
            ref["pytorch_loss"])
        row["param_max_diff"], row["param_off"] = run_kit.check_params(
            model, ref["pytorch"])
        # Timing: the step again on the trained state (ms, median).
        row["ours_ms"] = run_kit.time_calls(lambda: step(*shard), 3, 10)
        row["pass"] = (row["loss_error"] <= tol and
                       row["param_max_diff"] <= 2.5e-3 and
                       row["param_off"] <= 0.01 and
                       row["collectives"] == row["nccl_calls"] >= 1)
    except Exception as e:  # noqa: BLE001
        row["pass"], row["message"] = False, f"{type(e).__name__}: {e}"
    print(f"dp {name}: {row}", flush=True)
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kit", required=True)
    p.add_argument("--rows", required=True)
    a = p.parse_args()
    sys.path.insert(0, a.kit)
    sys.path.insert(0, os.path.join(a.kit, "python"))
    import torch
    import torch.distributed as dist
    import run_kit
    # The runtimes of the saved step need cuBLASLt, cudart and NCCL.
    run_kit.preload_cuda_libraries()
    run_kit.preload("libcudart.so.1*", "libcudart.so.13")
    run_kit.preload("libnccl.so.2*", "libnccl.so.2")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    manifest = json.load(open(os.path.join(a.kit, "manifest.json")))
    rows = [check_model(a.kit, name, torch, dist) for name in manifest["dp"]]
    dist.destroy_process_group()
    with open(a.rows, "w") as f:
        json.dump(rows, f, default=str)
    return 0 if all(r["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
