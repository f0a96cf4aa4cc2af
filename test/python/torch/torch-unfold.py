# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# F.unfold (aten.im2col) and its backward F.fold (aten.col2im), as
# ConvBERT's span-based dynamic convolution uses them: PyTorch's core
# decompositions read and write them by an advanced index, whose backward
# (a scatter) ga-mlir refused ("a write by index" at ConvBERT's
# nn.functional.unfold line). The decompositions against PyTorch's own
# kernels in float64 over kernels, dilations, paddings and strides, then
# a step of a small model with ConvBERT's unfold (kernel (k, 1), padding
# ((k - 1) / 2, 0)) in 2 micro-batches against the float64 step.

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import compile_train_step
from ga_mlir.torch import _decompositions as D

torch.manual_seed(0)
worst = 0.0
for kernel, dilation, padding, stride in [
        ((3, 1), (1, 1), (1, 0), (1, 1)), ((2, 3), (2, 1), (1, 2), (1, 1)),
        ((3, 3), (1, 1), (1, 1), (2, 2)), ((1, 2), (1, 3), (0, 0), (1, 2))]:
    for shape in [(2, 3, 7, 6), (3, 5, 6)]:
        x = torch.randn(shape, dtype=torch.float64)
        cols = F.unfold(x, kernel, dilation, padding, stride)
        worst = max(worst, (D._im2col(x, kernel, dilation, padding, stride)
                            - cols).abs().max().item())
        y = torch.randn_like(cols)
        folded = D._col2im(y, shape[-2:], kernel, dilation, padding, stride)
        if stride == (1, 1):
            expected = F.fold(y, shape[-2:], kernel, dilation, padding,
                              stride)
            worst = max(worst, (folded - expected).abs().max().item())
        else:
            assert folded is NotImplemented
# CHECK: decompositions: largest difference 0
print(f"decompositions: largest difference {worst:.3g}")


class SpanConv(nn.Module):
    """ConvBERT's light-weight span convolution, reduced: each token's
    window of k neighbours (F.unfold) weighted by a kernel that the token
    computes (softmax over the window)."""

    def __init__(self, d=8, k=3):
        super().__init__()
        self.k, self.kernel = k, nn.Linear(d, k)
        self.value, self.out = nn.Linear(d, d), nn.Linear(d, 3)

    def forward(self, x):  # (B, T, d)
        b, t, d = x.shape
        weights = torch.softmax(self.kernel(x), dim=-1)  # (B, T, k)
        v = self.value(x).transpose(1, 2).unsqueeze(-1)  # (B, d, T, 1)
        windows = F.unfold(v, [self.k, 1], padding=[(self.k - 1) // 2, 0])
        windows = windows.reshape(b, d, self.k, t)
        mixed = torch.einsum("bdkt,btk->btd", windows, weights)
        return self.out(torch.tanh(mixed).mean(1))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


for seed in range(2):
    torch.manual_seed(seed)
    model = SpanConv()
    ref = copy.deepcopy(model).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    x, y = torch.randn(6, 7, 8), torch.randint(0, 3, (6,))
    step = compile_train_step(model, loss_fn, opt, example_inputs=(x, y),
                              micro_batches=2)
    step(x, y)
    loss_fn(ref, x.double(), y).backward()
    ref_opt.step()
    moved = max((p.double() - q).abs().max().item()
                for p, q in zip(model.parameters(), ref.parameters()))
    # A lost or misplaced window moves a weight by the order of lr * grad
    # (1e-2); float32 rounding by 1e-7.
    # CHECK: seed 0: within 1e-6 of float64: True
    # CHECK: seed 1: within 1e-6 of float64: True
    print(f"seed {seed}: within 1e-6 of float64: {moved < 1e-6} "
          f"({moved:.2g})")
