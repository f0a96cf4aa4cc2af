# REQUIRES: ptxas
# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %s | sort | FileCheck %s
#
# Sharded steps compiled for the GPU inside a torch.distributed process
# group of 2 (gloo processes; no GPU here, so nothing runs): ZeRO-1
# (shard_optimizer=True) and sharded parameters (shard="parameters")
# compile with target="cuda" on every rank: their kernels assemble for sm_90
# (ptxas, inside the compilation), and the lowered host code of each rank
# calls NCCL's reduce-scatter and all-gather (gaNcclReduceScatter /
# gaNcclAllGather of libGANcclRuntime.so) where the CPU step calls the host
# collectives, one per sharded tensor: the MLP below has 6 parameters, all
# sharded, so 6 reduce-scatters and, after the optimizer, 6 all-gathers for
# ZeRO-1; with sharded parameters, each weight is gathered before the
# forward and again before the backward of every micro-batch (the default
# plan without max_memory). A parameter whose rows do not split in equal
# parts (5 classes on 2 ranks) is refused with NCCL's reason, at its line.
#
# CHECK: rank 0 uneven: CompileError {{.*}}equal parts{{.*}}
# CHECK: rank 0 zero1: DataParallelTrainStep reduce-scatters 6 all-gathers 6 host collectives 0 binary True
# CHECK: rank 0 zero3: ShardedParametersTrainStep reduce-scatters {{[1-9][0-9]*}} all-gathers {{[1-9][0-9]*}} host collectives 0 binary True
# CHECK: rank 1 uneven: CompileError {{.*}}equal parts{{.*}}
# CHECK: rank 1 zero1: DataParallelTrainStep reduce-scatters 6 all-gathers 6 host collectives 0 binary True
# CHECK: rank 1 zero3: ShardedParametersTrainStep reduce-scatters {{[1-9][0-9]*}} all-gathers {{[1-9][0-9]*}} host collectives 0 binary True

import os
import re
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_worker import say  # noqa: E402

import zoo
from ga_mlir.torch import CompileError, compile_train_step

dist.init_process_group("gloo")
rank = dist.get_rank()


def loss_fn(m, x, y):
    return F.cross_entropy(m(x), y)


def counts(step, name):
    """The NCCL and host collective calls of the step's lowered host code
    (the cache's step.lowered.mlir beside its library)."""
    v = next(iter(step._variants.values()))
    text = open(os.path.join(os.path.dirname(v.path),
                             "step.lowered.mlir")).read()
    host = text[:text.find("gpu.binary")]
    calls = lambda fn: len(re.findall(rf"llvm\.call @{fn}\(", host))
    say(f"rank {rank} {name}: {type(step).__name__} "
        f"reduce-scatters {calls('gaNcclReduceScatter')} "
        f"all-gathers {calls('gaNcclAllGather')} "
        f"host collectives {calls('gaHost[A-Za-z]*')} "
        f"binary {'gpu.binary' in text}")


def case(classes):
    torch.manual_seed(0)
    model = zoo.MLP(classes=classes)
    batch = (torch.randn(8, 12), torch.randint(0, classes, (8,)))
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3), batch


model, opt, batch = case(5)
try:
    compile_train_step(model, loss_fn, opt, batch, micro_batches=2,
                       target="cuda", shard_optimizer=True)
    say(f"rank {rank} uneven: compiled?")
except CompileError as e:
    say(f"rank {rank} uneven: CompileError " + " ".join(str(e).split()))

model, opt, batch = case(6)
counts(compile_train_step(model, loss_fn, opt, batch, micro_batches=2,
                          target="cuda", shard_optimizer=True), "zero1")
model, opt, batch = case(6)
counts(compile_train_step(model, loss_fn, opt, batch, micro_batches=2,
                          target="cuda", shard="parameters"), "zero3")
dist.destroy_process_group()
