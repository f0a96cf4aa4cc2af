# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A compiled step is traced once per input shape, and the trace bakes in what
# the model and the optimizer were at that moment: BatchNorm's training flag,
# SGD's momentum on or off, which parameters require gradients, module
# settings such as BatchNorm's eps. When one of these changes between calls,
# the step must be traced again, not reused: each step below is compared with
# PyTorch's own full-batch step after the same change (train -> eval ->
# train, momentum switched on, a parameter frozen, eps changed). Calls with
# nothing changed must reuse the compiled step.

import sys

import torch
import torch.nn as nn

import zoo
from ga_mlir.torch import compile_train_step

failures = 0


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(12, 16, bias=False)
        self.bn = nn.BatchNorm1d(16, momentum=0.3)
        self.l2 = nn.Linear(16, 5)

    def forward(self, x):
        return self.l2(torch.relu(self.bn(self.l1(x))))


def changes(it, model, opt):
    """Applied to both sides before step `it`."""
    if it == 1:
        model.eval()  # BatchNorm normalizes with its running statistics
    elif it == 2:
        model.train()
    elif it == 3:
        for group in opt.param_groups:
            if "nesterov" in group:
                group["momentum"] = 0.9  # momentum buffers from now on
    elif it == 4:
        model.l2.bias.requires_grad_(False)
    elif it == 5:
        model.bn.eps = 0.5


def plain_sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.05)


# CHECK: retrace plain_sgd N=3: {{.*}} OK
# CHECK: retrace adamw N=3: {{.*}} OK
failures += zoo.check("retrace", BNNet, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=(plain_sgd, "adamw"),
                      ns=(3,), steps=6, before_step=changes,
                      recompute_statistics=True)

# Unchanged calls reuse the step; each change adds one trace.
torch.manual_seed(0)
model = BNNet()
opt = plain_sgd(model)
batch = zoo.mlp_batch(torch.Generator().manual_seed(3))
step = compile_train_step(model, zoo.classification_loss, opt,
                          example_inputs=batch, micro_batches=2,
                          recompute_statistics=True)
counts = []
for change in (None, None, "eval", None, "train"):
    if change == "eval":
        model.eval()
    elif change == "train":
        model.train()
    step(*batch)
    counts.append(len(step._variants))
# CHECK: traces after each call: [1, 1, 2, 2, 2]
print("traces after each call:", counts)

sys.exit(1 if failures else 0)
