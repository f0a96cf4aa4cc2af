# REQUIRES: ptxas
# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%ga_src_root/scripts/gpu_kit GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %ga_src_root | FileCheck %s
#
# step.memory_report() and max_memory= of a target="cuda" step describe the
# GPU step, on a machine without a GPU: its device bytes as the GPU lowering
# bufferizes it (bf16 activations where autocast stores them), the cuBLASLt
# workspace the runtime holds, and a budget of device bytes. The oracles are
# independent of the analysis: PyTorch's own parameter, optimizer-state and
# batch sizes, the runtime ABI header's workspace constant, and the reports
# of the same model in f32 (the GPU bufferization of the f32 step, and the
# CPU library's report).

import os
import re
import sys

import torch

import kit_models
from ga_mlir.torch import CompileError, compile_train_step
from ga_mlir.torch._budget import _choose_micro_batches, _memory_report
from ga_mlir.torch._dp_memory import argument_roles

root = sys.argv[1]
abi = open(os.path.join(root, "include", "ga-runtime",
                        "GARuntimeABI.h")).read()
m = re.search(r"kCublasLtWorkspaceBytes = std::size_t\((\d+)\) << (\d+);",
              abi)
workspace = int(m.group(1)) << int(m.group(2))

torch.manual_seed(0)
# More tokens than weights per layer (B T = 256 against d = 32): the
# activations, not the weights' gradients, dominate the temporaries.
B, T, V = 8, 32, 64
ids, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))


def fresh():
    torch.manual_seed(0)
    gpt = kit_models.GPT(vocab=V, d=32, heads=4, context=T)
    return gpt, kit_models.optimizer_for(gpt)


def f32_loss(m, ids, targets):
    # kit_models.gpt_loss without autocast: every activation in f32.
    return torch.nn.functional.cross_entropy(
        m(ids).float().reshape(-1, V), targets.reshape(-1))


gpt, opt = fresh()
param_bytes = sum(p.numel() * p.element_size() for p in gpt.parameters())
gstep = compile_train_step(gpt, kit_models.gpt_loss, opt, (ids, targets),
                           micro_batches=1, target="cuda",
                           accumulator_type="f32")
gpu = gstep.memory_report()
gpt, opt = fresh()
cpu_step = compile_train_step(gpt, f32_loss, opt, (ids, targets),
                              micro_batches=1)
cpu32 = cpu_step.memory_report()
# The f32 step's GPU report, from its traced IR (the report that
# memory_report() of a target="cuda" step asks the driver for; no second
# GPU compilation).
v = next(iter(cpu_step._variants.values()))
gpu32 = _memory_report(v.ir, 1, v.batch_args, {}, v.in_place,
                       argument_roles(v.spec, 2), "cuda")

print("target:", gpu["target"], gpu32["target"], cpu32["target"])
# CHECK: target: cuda cuda cpu
# fp32 master weights and AdamW's two fp32 moments (plus its 0-d step
# counters) under autocast as without it; the batch is two int64 [B, T].
print("parameters exact:", gpu["parameters"] == param_bytes ==
      cpu32["parameters"])
print("optimizer state >= 2 moments:",
      gpu["optimizer_state"] >= 2 * param_bytes)
print("inputs exact:", gpu["inputs"] == 2 * B * T * 8)
# CHECK: parameters exact: True
# CHECK: optimizer state >= 2 moments: True
# CHECK: inputs exact: True
# The products are cuBLASLt calls: the runtime's one workspace, in the
# total; the CPU report has no such line.
print("workspace:", gpu["workspaces"] == workspace, "in total:",
      gpu["total_peak"] == gpu["arguments"] + gpu["allocation_peak"] +
      gpu["static"] + gpu["workspaces"], "cpu:", "workspaces" in cpu32)
# CHECK: workspace: True in total: True cpu: False
# Activations: under autocast the products' outputs (the activations the
# backward keeps: Q, K, V, attention scores and probabilities, the MLP's
# hidden layer, the logits) are bf16, 2 bytes an element instead of 4; the
# rest stays fp32, as PyTorch's autocast keeps it: LayerNorm outputs and the
# residual stream (an fp32 LayerNorm output plus a bf16 product is fp32),
# softmax and loss statistics, the gradients of the fp32 weights. So the
# bf16 step's temporaries are at least half and less than all of the f32
# step's (measured here: about 0.9 of the GPU f32 step's, the f32 residual
# stream dominating at d = 32; about 0.75 of the CPU's f32 report, which
# also pads every buffer by 64 bytes), while parameters, optimizer state and
# inputs are the same bytes.
r_gpu = gpu["temporaries"] / gpu32["temporaries"]
r_cpu = gpu["temporaries"] / cpu32["temporaries"]
print(f"bf16/f32 temporaries: gpu {r_gpu:.3f} cpu {r_cpu:.3f}",
      file=sys.stderr)
print("same arguments:", all(gpu[k] == gpu32[k] for k in (
    "parameters", "optimizer_state", "inputs")))
print("bf16 activations: fewer than f32 on the GPU", 0.5 <= r_gpu < 1,
      "and than the CPU's f32 report", 0.5 <= r_cpu < 1)
# CHECK: same arguments: True
# CHECK: bf16 activations: fewer than f32 on the GPU True and than the CPU's f32 report True

# max_memory= for cuda: a budget of device bytes, one byte under the N = 1
# peak: a larger N whose GPU report fits. The choice and the report as
# compile_train_step(..., max_memory=budget, target="cuda") asks the driver
# for them (without compiling the chosen step for the GPU once more).
budget = gpu["total_peak"] - 1
gv = next(iter(gstep._variants.values()))
options = {"accumulator_type": "f32", "recompute": "none"}
roles, pairs = argument_roles(gv.spec, 2), gstep._in_place_pairs(gv.spec)
choice = _choose_micro_batches(gv.ir, gv.batch_args, None, None, budget,
                               options, pairs, roles, "cuda")
report = _memory_report(gv.ir, choice["micro_batches"], gv.batch_args,
                        options, pairs, roles, "cuda")
print("budget: N =", choice["micro_batches"], "> 1:",
      choice["micro_batches"] > 1, "report fits:",
      report["total_peak"] == choice["predicted_peak"] <= budget,
      "target:", report["target"])
# CHECK: budget: N = {{[0-9]+}} > 1: True report fits: True target: cuda

# A budget under the workspace alone fits no N: the located error names the
# smallest device budget (that it is the least peak of all N is checked in
# test/Transforms/ga-memory-report-cuda.test).
gpt, opt = fresh()
try:
    compile_train_step(gpt, kit_models.gpt_loss, opt, (ids, targets),
                       max_memory="16MiB", recompute="none", target="cuda",
                       accumulator_type="f32")
except CompileError as e:
    text = str(e)
    print("too small:", " | ".join(text.splitlines()))
    smallest = int(re.search(r"smallest budget that fits is max-memory=(\d+)",
                             text).group(1))
# CHECK: too small: ga-mlir could not choose the number of micro-batches: | {{.*}}kit_models.py:{{[0-9]+}}: error: no number of micro-batches brings the step's peak memory under max_memory: {{.*}}the smallest static device peak (target=cuda) is {{.*}} with N = {{[0-9]+}}
print("smallest above the workspace:", smallest > workspace,
      "at most the chosen N's:", smallest <= report["total_peak"])
# CHECK: smallest above the workspace: True at most the chosen N's: True
