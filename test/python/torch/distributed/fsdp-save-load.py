# RUN: rm -rf %t.cache %t.saved && mkdir -p %t.saved
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %s train %t.saved | sort | FileCheck %s --check-prefix=TRAIN
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %s resume %t.saved | sort | FileCheck %s --check-prefix=RESUME
#
# step.save / load_step of a shard="parameters" step (CPU, two gloo
# processes, uneven rows: the MLP's 5-row last layer splits 2 / 3). Phase
# `train`: each rank compiles the step, saves it for its rank (a directory
# per rank), takes one step, writes the whole parameters
# (step.full_state_dict()) and its optimizer state (AdamW's rows), takes a
# second step and writes its loss and its rows. Phase `resume`, fresh
# processes without the compiler: a model of other values loads the whole
# parameters, load_step cuts them to the rank's rows, the optimizer loads
# the rank's state, and the next step equals the uninterrupted second step
# bit for bit (loss, parameters, optimizer state). Loading the other rank's
# step is refused naming both ranks.
#
# TRAIN: rank 0 saved: libGAHostCollectives.so libstep.so step.json
# TRAIN: rank 1 saved: libGAHostCollectives.so libstep.so step.json
# RESUME: rank 0 other rank: CompileError load_step: this shard='parameters' step was saved by rank 1 of a group of 2 {{.*}}this is rank 0 of 2
# RESUME: rank 0 resumed: holds-its-rows True loss True parameters True optimizer-state True
# RESUME: rank 1 other rank: CompileError load_step: this shard='parameters' step was saved by rank 0 of a group of 2 {{.*}}this is rank 1 of 2
# RESUME: rank 1 resumed: holds-its-rows True loss True parameters True optimizer-state True

import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_worker import leave, say  # noqa: E402

import zoo
from ga_mlir.torch import CompileError, load_step

phase, saved = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
here = os.path.join(saved, f"rank{rank}")


def loss_fn(m, x, y):
    return F.cross_entropy(m(x), y)


def batch(k):
    """This rank's shard (rows [4 rank, 4 rank + 4)) of global batch k."""
    gen = torch.Generator().manual_seed(100 + k)
    x, y = torch.randn(8, 12, generator=gen), torch.randint(0, 5, (8,),
                                                            generator=gen)
    return x[4 * rank:4 * rank + 4], y[4 * rank:4 * rank + 4]


def new_model(seed):
    torch.manual_seed(seed)
    model = zoo.MLP()
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


if phase == "train":
    from ga_mlir.torch import compile_train_step
    model, opt = new_model(0)
    step = compile_train_step(model, loss_fn, opt, batch(0), micro_batches=2,
                              shard="parameters")
    step.save(here)
    say(f"rank {rank} saved: " + " ".join(sorted(os.listdir(here))))
    step(*batch(0))
    full = step.full_state_dict()
    torch.save({"full": full, "optimizer": opt.state_dict()},
               os.path.join(here, "after-1.pt"))
    loss = step(*batch(1))
    torch.save({"loss": loss,
                "rows": {n: p.detach().clone()
                         for n, p in model.named_parameters()},
                "optimizer": opt.state_dict()},
               os.path.join(here, "after-2.pt"))
else:
    after1 = torch.load(os.path.join(here, "after-1.pt"))
    after2 = torch.load(os.path.join(here, "after-2.pt"))
    model, opt = new_model(1)
    try:
        load_step(os.path.join(saved, f"rank{1 - rank}"), model, opt)
        say(f"rank {rank} other rank: loaded?")
    except CompileError as e:
        say(f"rank {rank} other rank: CompileError " +
            " ".join(str(e).split()))
    model, opt = new_model(1)
    model.load_state_dict(after1["full"])
    whole = {n: tuple(p.shape) for n, p in model.named_parameters()}
    step = load_step(here, model, opt)
    held = all(
        tuple(p.shape) == tuple(after2["rows"][n].shape)
        and torch.equal(p.detach(), after1["full"][n][
            rank * whole[n][0] // world:(rank + 1) * whole[n][0] // world])
        for n, p in model.named_parameters())
    opt.load_state_dict(after1["optimizer"])
    loss = step(*batch(1))
    params = all(torch.equal(p.detach(), after2["rows"][n])
                 for n, p in model.named_parameters())
    now, then = opt.state_dict()["state"], after2["optimizer"]["state"]
    state = now.keys() == then.keys() and all(
        now[i].keys() == then[i].keys() and all(
            torch.equal(torch.as_tensor(now[i][k]), torch.as_tensor(then[i][k]))
            for k in then[i]) for i in then)
    say(f"rank {rank} resumed: holds-its-rows {held} "
        f"loss {torch.equal(loss, after2['loss'])} parameters {params} "
        f"optimizer-state {state}")
leave(True)
