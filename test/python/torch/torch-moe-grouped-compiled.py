# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The grouped product compiled: transformers' grouped_mm_fallback traced as
# ga_mlir::grouped_mm, imported as ga.grouped_matmul (its weights' gradient
# with transpose_lhs), split into micro-batches by its batch model (rows
# per sample in order: each micro-batch shifts the group ends by its first
# row and accumulates its part of the weights' gradient) and lowered to a
# CBLAS product per group, against PyTorch's own full-batch step (the zoo's
# rule: loss, parameters and optimizer states after each of 3 steps), SGD
# and AdamW, N = 1, 2, 4. The group ends are a buffer with an empty group
# and rows past the last end (whose output is zero), and the ends change
# between steps: the compiled step reads them as data.

import sys

import torch
import torch.nn as nn
import transformers.integrations.moe  # noqa: F401 (registers the op)

import model_zoo
import zoo

model_zoo.quiet()
B, T = 8, 3


class PositionExperts(nn.Module):
    """[B, T, 6] tokens; the B * T rows in order, each row times the matrix
    of the group its position falls in (group ends a buffer), a residual
    and a head over the mean of each sample's tokens."""

    def __init__(self, d=8, experts=4):
        super().__init__()
        self.inp = nn.Linear(6, d)
        self.w = nn.Parameter(torch.randn(experts, d, d) / 3)
        self.register_buffer("ends", torch.tensor([5, 5, 17, 22],
                                                  dtype=torch.int32))
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        b, t, _ = x.shape
        h = torch.tanh(self.inp(x)).reshape(b * t, -1)
        experts = torch.ops.transformers.grouped_mm_fallback
        y = experts(h, self.w, offs=self.ends)  # experts
        return self.head((torch.tanh(y) + h).reshape(b, t, -1).mean(1))


def batch(gen):
    return (torch.randn(B, T, 6, generator=gen),
            torch.randint(0, 5, (B,), generator=gen))


def move_ends(it, model, optimizer):
    """Other group ends at every step (the last one all rows, then one
    that leaves 7 rows out)."""
    model.ends.copy_(torch.tensor([[5, 5, 17, 22], [0, 9, 9, 24],
                                   [3, 12, 16, 17]][it], dtype=torch.int32))


# CHECK: position experts sgd N=1: {{.*}} OK
# CHECK: position experts sgd N=2: {{.*}} OK
# CHECK: position experts sgd N=4: {{.*}} OK
# CHECK: position experts adamw N=1: {{.*}} OK
# CHECK: position experts adamw N=2: {{.*}} OK
# CHECK: position experts adamw N=4: {{.*}} OK
failures = zoo.check("position experts", PositionExperts, batch,
                     zoo.classification_loss, ns=(1, 2, 4),
                     before_step=move_ends)

# CHECK: failures: 0
print(f"failures: {failures}")
sys.exit(failures != 0)
