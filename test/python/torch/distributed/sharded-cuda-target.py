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
# plan without max_memory). Parameters whose rows do not split in equal
# parts (5 classes on 2 ranks: the last layer's weight and bias) compile too:
# their collectives work on a padded buffer of NCCL's equal parts (6 rows,
# the rank's rows at the start of its part), with the same calls; the rank's
# shard is the CPU's rows (2 on rank 0, 3 on rank 1), so model.parameters()
# hold the same views on both targets. That step is compiled under a
# per-rank max_memory: the plan is chosen on the GPU step's memory report
# (device bytes), which is also what its memory_report() returns.
# libGANcclRuntime.so forwards gaNcclReduceScatter / gaNcclAllGather to the
# frontend's callbacks (stream first) and, without them or a communicator,
# fails with a message.
#
# CHECK: rank 0 forwarded: (0, 0) [('scatter', 20480, 28672, 28696, 6, 7, 0), ('gather', 20480, 28696, 28672, 6, 7)] calls 2
# CHECK: rank 0 uneven report: cuda total True workspaces 33554432 planned True
# CHECK: rank 0 uneven rows: [2, 2]
# CHECK: rank 0 uneven zero3: ShardedParametersTrainStep reduce-scatters {{[1-9][0-9]*}} all-gathers {{[1-9][0-9]*}} host collectives 0 binary True
# CHECK: rank 0 unforwarded: 1 1
# CHECK: rank 0 zero1: DataParallelTrainStep reduce-scatters 6 all-gathers 6 host collectives 0 binary True
# CHECK: rank 0 zero3: ShardedParametersTrainStep reduce-scatters {{[1-9][0-9]*}} all-gathers {{[1-9][0-9]*}} host collectives 0 binary True
# CHECK: rank 1 forwarded: (0, 0) [('scatter', 20480, 28672, 28696, 6, 7, 0), ('gather', 20480, 28696, 28672, 6, 7)] calls 2
# CHECK: rank 1 uneven report: cuda total True workspaces 33554432 planned True
# CHECK: rank 1 uneven rows: [3, 3]
# CHECK: rank 1 uneven zero3: ShardedParametersTrainStep reduce-scatters {{[1-9][0-9]*}} all-gathers {{[1-9][0-9]*}} host collectives 0 binary True
# CHECK: rank 1 unforwarded: 1 1
# CHECK: rank 1 zero1: DataParallelTrainStep reduce-scatters 6 all-gathers 6 host collectives 0 binary True
# CHECK: rank 1 zero3: ShardedParametersTrainStep reduce-scatters {{[1-9][0-9]*}} all-gathers {{[1-9][0-9]*}} host collectives 0 binary True

import ctypes
import os
import re
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_worker import say  # noqa: E402

import zoo
from ga_mlir.torch import compile_train_step

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
uneven = compile_train_step(model, loss_fn, opt, batch, max_memory="33MiB",
                            target="cuda", shard="parameters")
counts(uneven, "uneven zero3")
# Its memory report is the GPU step's (device bytes, padded NCCL buffers
# included): arguments, the peak of the live allocations, the workspace;
# the budget's plan is chosen on it (its predicted peak the largest of the
# ranks' reports, within the 33 MiB, the 32 MiB cuBLASLt workspace
# included).
r = uneven.memory_report()
plan = uneven.shard_plan()
say(f"rank {rank} uneven report: {r['target']} total "
    f"{r['total_peak'] == r['arguments'] + r['allocation_peak'] + r['workspaces']}"
    f" workspaces {r['workspaces']} planned "
    f"{r['total_peak'] <= plan['predicted_peak'] <= 33 << 20}")
# The last layer's weight and bias: the rank's rows of 5, as on the CPU.
say(f"rank {rank} uneven rows: "
    f"{[p.shape[0] for p in model.parameters()][-2:]}")

model, opt, batch = case(6)
zero1 = compile_train_step(model, loss_fn, opt, batch, micro_batches=2,
                           target="cuda", shard_optimizer=True)
counts(zero1, "zero1")

# libGANcclRuntime.so (beside the step's library) forwards both sharded
# collectives, stream included, to the callbacks the frontend registers
# (gaNcclForwardSharded), counted by gaNcclShardedCalls; without them it
# reports that it has no communicator.
nccl = ctypes.CDLL(os.path.join(os.path.dirname(
    next(iter(zero1._variants.values())).path), "libGANcclRuntime.so"))
SCATTER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32,
                           ctypes.c_int32)
GATHER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32)
seen = []
scatter = SCATTER(lambda *a: seen.append(("scatter",) + a) or 0)
gather = GATHER(lambda *a: seen.append(("gather",) + a) or 0)
nccl.gaNcclForwardSharded.argtypes = [SCATTER, GATHER]
ptr, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32
nccl.gaNcclReduceScatter.argtypes = [ptr, ptr, ptr, i64, i32, i32]
nccl.gaNcclAllGather.argtypes = [ptr, ptr, ptr, i64, i32]
nccl.gaNcclShardedCalls.restype = ctypes.c_int64
nccl.gaNcclForwardSharded(scatter, gather)
status = (nccl.gaNcclReduceScatter(0x5000, 0x7000, 0x7018, 6, 7, 0),
          nccl.gaNcclAllGather(0x5000, 0x7018, 0x7000, 6, 7))
say(f"rank {rank} forwarded: {status} {seen} calls "
    f"{nccl.gaNcclShardedCalls()}")
nccl.gaNcclForwardSharded(SCATTER(), GATHER())
say(f"rank {rank} unforwarded: "
    f"{nccl.gaNcclReduceScatter(0x5000, 0x7000, 0x7018, 6, 7, 0)} "
    f"{nccl.gaNcclAllGather(0x5000, 0x7018, 0x7000, 6, 7)}")
model, opt, batch = case(6)
counts(compile_train_step(model, loss_fn, opt, batch, micro_batches=2,
                          target="cuda", shard="parameters"), "zero3")
dist.destroy_process_group()
