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
import torch
import torch.nn as nn

from export_step import write_sgd_step


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
write_sgd_step(model, torch.randn(7, 2, 8, 8), torch.randint(0, 3, (7,)))
