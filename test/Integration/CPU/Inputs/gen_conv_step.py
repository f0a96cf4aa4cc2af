"""Writes conv_step.mlir: a small CNN's SGD-with-momentum training step as
ga_mlir.torch.export_train_step exports it (torch-mlir's linalg on tensors),
its per-sample arguments marked with ga.batch, locations dropped. It holds
the convolution forms torch-mlir emits for a forward pass and both
gradients: strided and padded, dilated with bias, strided with kernel 2, 1x1,
and 1-d convolutions.

    PYTHONPATH=python .venv/bin/python \\
        test/Integration/CPU/Inputs/gen_conv_step.py > conv_step.mlir.raw
    build/bin/ga-opt conv_step.mlir.raw -o conv_step.mlir
"""
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import export_train_step


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 4, 3, stride=2, padding=1, bias=False)
        self.c2 = nn.Conv2d(4, 4, 3, padding=2, dilation=2)
        self.c3 = nn.Conv2d(4, 6, 2, stride=2)
        self.c4 = nn.Conv2d(6, 3, 1)
        self.c5 = nn.Conv1d(3, 2, 2)
        self.fc = nn.Linear(2, 3)

    def forward(self, x):
        x = torch.tanh(self.c1(x))
        x = torch.tanh(self.c2(x))
        x = torch.tanh(self.c3(x))
        x = self.c4(x)
        x = self.c5(x.flatten(2))
        return self.fc(x.mean(2))


torch.manual_seed(0)
model = Net()
x, y = torch.randn(7, 2, 8, 8), torch.randint(0, 3, (7,))
text, _ = export_train_step(
    model, lambda m, x, y: F.cross_entropy(m(x), y),
    torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), (x, y))
# The inputs (the last two arguments) are per-sample along dimension 0.
text = re.sub(r"(%arg\d+: tensor<7x2x8x8xf32>)", r"\1 {ga.batch = 0 : i64}",
              text, count=1)
text = re.sub(r"(%arg\d+: tensor<7xi64>)", r"\1 {ga.batch = 0 : i64}",
              text, count=1)
sys.stdout.write(text)
