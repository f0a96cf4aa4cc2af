# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# In-place operations on a view of a pooled feature map (torchvision's
# EfficientNet: `torch.flatten(pool(x), 1)` then `nn.Dropout(inplace=True)`).
# Functionalization writes them back through as_strided/as_strided_scatter
# of the flattened base, which torch-mlir does not lower (it was refused at
# the classifier's line); a contiguous window of a contiguous base is a
# slice of the flattened base now (a rewrite of the traced graph,
# _rewrites.py). Checked against PyTorch's full-batch step
# (in-place mul_/sigmoid_, N = 3 on a batch of 6), and, with an in-place
# dropout in training mode, N = 1 against N = 3 (the masks are drawn by
# sample, so the step does not depend on N).

import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import compile_train_step


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(nn.Dropout(dropout, inplace=True),
                                  nn.Linear(8, 3))
        self.dropout = dropout

    def forward(self, x):
        x = torch.flatten(self.pool(self.conv(x)), 1)
        if not self.dropout:
            x.mul_(2).sigmoid_()
        return self.head(x)


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.5)


gen = torch.Generator().manual_seed(1)
x, y = torch.randn(6, 3, 8, 8, generator=gen), torch.randint(0, 3, (6,),
                                                             generator=gen)

torch.manual_seed(0)
model = Net(0.0)
reference = copy.deepcopy(model)
step = compile_train_step(model, loss_fn, sgd(model), example_inputs=(x, y),
                          micro_batches=3)
loss = step(x, y)
opt = sgd(reference)
ref_loss = loss_fn(reference, x, y)
ref_loss.backward()
opt.step()
worst = max([abs(loss.item() - ref_loss.item())] +
            [(p - q).abs().max().item()
             for p, q in zip(model.parameters(), reference.parameters())])
print(f"in-place on a view: {worst:.1e} {'OK' if worst < 1e-6 else 'FAIL'}")
# CHECK: in-place on a view: {{.*}} OK

results = []
for n in (1, 3):
    torch.manual_seed(0)
    model = Net(0.2)
    step = compile_train_step(model, loss_fn, sgd(model),
                              example_inputs=(x, y), micro_batches=n)
    torch.manual_seed(5)  # the same seed for the step's draws
    results.append([step(x, y).detach()] +
                   [p.detach().clone() for p in model.parameters()])
spread = max((a - b).abs().max().item() for a, b in zip(*results))
print(f"in-place dropout, N = 1 against N = 3: {spread:.1e} "
      f"{'OK' if spread < 1e-6 else 'FAIL'}")
# CHECK: in-place dropout, N = 1 against N = 3: {{.*}} OK
sys.exit(worst >= 1e-6 or spread >= 1e-6)
