# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The expert loop rule (_expert_loop.py) on transformers' per-expert loops:
# Mixtral with experts_implementation="eager" and DBRX (DbrxExperts, its
# only experts; matrices as views of [E * F, d] parameters, x @ w1.T), one
# layer of 4 experts, top-2, compiled in N = 4 micro-batches against
# PyTorch's own full-batch step by the zoo's rule (SGD with momentum, two
# steps on two batches: other routings, and the float64 oracle runs
# transformers' own loop). The loop over the experts hit runs once over
# every token-expert pair: each layer's grouped products have T * k rows,
# and no tensor of the step is as large as the dense emulation of the
# experts (every token times every expert's widest matrix). Uses of the
# loop that would read which experts the batch hit, or across the pairs'
# rows, are refused at their line.

import glob
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import model_zoo
import moe_models
import zoo
from ga_mlir.torch import CompileError

model_zoo.quiet()
B, S, E, K = 8, model_zoo.T, 4, 2
cache = os.environ["GA_MLIR_CACHE_DIR"]
model_zoo.MODELS["mixtral-eager"] = moe_models.zoo_case(
    "mixtral", experts_implementation="eager")
model_zoo.MODELS["dbrx"] = moe_models.zoo_case("dbrx")


def step_ir():
    """The imported step of the latest compile (step.mlir of its cache
    folder)."""
    folders = sorted(glob.glob(os.path.join(cache, "*", "step.mlir")),
                     key=os.path.getmtime)
    return open(folders[-1]).read()


def expert_work(name, width):
    """The rows of the step's grouped products, and whether its largest
    tensor is smaller than the dense emulation of the E experts (B * S
    tokens times every expert's `width` columns)."""
    text = step_ir()
    rows = sorted({int(m) for m in re.findall(
        r'ga\.grouped_matmul"\([^)]*\)[^:]*: \(tensor<(\d+)x', text)})
    largest = max(eval("*".join(dims.split("x")[:-1]))
                  for dims in re.findall(r"tensor<((?:\d+x)+)", text))
    print(f"{name}: grouped product rows {rows}, "
          f"{text.count('ga.grouped_matmul')} products, largest tensor "
          f"{largest} < dense {B * S * E * width}: "
          f"{largest < B * S * E * width}")


# CHECK: mixtral-eager sgd N=4: {{.*}} OK
# CHECK: mixtral-eager: grouped product rows [128], 6 products, largest tensor {{[0-9]+}} < dense {{[0-9]+}}: True
failures = model_zoo.run([("mixtral-eager", "sgd", 4)], batch=B)
expert_work("mixtral-eager", 96)
# CHECK: dbrx sgd N=4: {{.*}} OK
# CHECK: dbrx: grouped product rows [128], 9 products, largest tensor {{[0-9]+}} < dense {{[0-9]+}}: True
failures += model_zoo.run([("dbrx", "sgd", 4)], batch=B)
expert_work("dbrx", 48)


class LoopExperts(nn.Module):
    """A top-2 MoE classifier whose experts are a loop over the experts hit
    written as transformers writes it; `misuse` picks a use that the rule
    refuses."""

    def __init__(self, misuse, d=8):
        super().__init__()
        self.misuse = misuse
        self.embed = nn.Linear(6, d)
        self.gate = nn.Linear(d, E)
        self.w = nn.Parameter(torch.randn(E, d, d) / 3)
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        h = torch.tanh(self.embed(x))
        h = h.reshape(-1, h.shape[-1])
        top, ids = torch.topk(F.softmax(self.gate(h), -1), K, dim=-1)
        out = torch.zeros_like(h)
        mask = F.one_hot(ids, num_classes=E).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        if self.misuse == "len":
            out = out + len(hit)  # len
        for e in hit:
            e = e[0]
            if self.misuse == "item":
                e = e.item()  # item
            pos, token = torch.where(mask[e])
            rows = F.linear(h[token], self.w[e])
            if self.misuse == "reduction":
                rows = rows - rows.mean(0)  # reduction
            out.index_add_(0, token, rows * top[token, pos, None])
            if self.misuse == "break":
                break  # break
        return self.head(out.reshape(x.shape[0], -1, out.shape[-1]).mean(1))


def batch(gen):
    return (torch.randn(4, 3, 6, generator=gen),
            torch.randint(0, 5, (4,), generator=gen))


# CHECK: len: refused: {{.*}}torch-moe-expert-loop.py:[[#]]: error: the list of the experts hit reaches __len__ (the experts hit at {{.*}}torch-moe-expert-loop.py:[[#]])
# CHECK: len: located: True
# CHECK: item: refused: {{.*}}: error: the loop variable over the experts hit reaches item
# CHECK: item: located: True
# CHECK: reduction: refused: {{.*}}: error: mean across the rows of the loop's token-expert pairs
# CHECK: reduction: located: True
# CHECK: break: refused: {{.*}}: error: the loop over the experts hit {{.*}} left before its end (break)
# CHECK: break: located: True
for misuse in ("len", "item", "reduction", "break"):
    where = f"torch-moe-expert-loop.py:{zoo.line_of(__file__, misuse)}"
    try:
        zoo.refused(misuse, LoopExperts(misuse), zoo.classification_loss,
                    batch, where)
    except CompileError as error:
        print(f"{misuse}: not refused at compile: {error}")
        failures += 1
sys.exit(failures)
