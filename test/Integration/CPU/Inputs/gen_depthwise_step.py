"""Writes depthwise_step.mlir: a small CNN with depthwise and grouped
convolutions, its SGD-with-momentum training step as
ga_mlir.torch.export_train_step exports it (torch-mlir's linalg on tensors:
linalg.depthwise_conv_2d_nchw_chw and linalg.conv_2d_ngchw_gfchw forward,
their gradients as the frontend decomposes them into forward grouped
convolutions), its per-sample arguments marked with ga.batch. It holds a
depthwise convolution with padding (groups == channels), a strided one, a
dilated one with bias, a 5x5 one, and a grouped one (groups = 2).

    PYTHONPATH=build/python_packages .venv/bin/python \\
        test/Integration/CPU/Inputs/gen_depthwise_step.py > depthwise_step.mlir.raw
    build/bin/ga-opt depthwise_step.mlir.raw -o depthwise_step.mlir
"""
import torch
import torch.nn as nn

from export_step import write_sgd_step


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1 = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.d2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4)
        self.d3 = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=4)
        self.g = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.d5 = nn.Conv2d(6, 6, 5, stride=2, padding=2, groups=6)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = torch.tanh(self.d1(x))
        x = torch.tanh(self.d2(x))
        x = torch.tanh(self.d3(x))
        x = torch.tanh(self.g(x))
        x = self.d5(x)
        return self.fc(x.mean((2, 3)))


torch.manual_seed(0)
model = Net()
write_sgd_step(model, torch.randn(7, 4, 9, 9), torch.randint(0, 3, (7,)))
