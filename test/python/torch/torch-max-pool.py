# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# max_pool2d's backward with overlapping or padded windows, as the trace
# decomposes it (a window-sized term per kernel position, summed per phase
# of the stride): first the decomposition itself against PyTorch's own
# kernel, bit for bit, over kernels, strides, paddings, dilations and sizes
# that the stride does not divide, with ties in the windows; then a step of
# a CNN with such poolings against PyTorch's step, on 1 and 2 threads.

import itertools
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo
from ga_mlir.torch import _decompositions

torch.manual_seed(0)
checked = differ = 0
for kernel, stride, padding, dilation, h, w in itertools.product(
        [2, 3, (3, 2), 5], [1, 2, 3, (2, 1)], [0, 1, 2], [1, 2], [7, 8],
        [6, 9]):
    k, p = _decompositions._pair(kernel), _decompositions._pair(padding)
    if p[0] > k[0] // 2 or p[1] > k[1] // 2 or \
            h + 2 * p[0] <= dilation * (k[0] - 1) or \
            w + 2 * p[1] <= dilation * (k[1] - 1):
        continue  # PyTorch refuses the padding, or no window fits
    for ties in (False, True):
        x = zoo.pooling_input((2, 3, h, w), ties)
        y, indices, g, expected = zoo.max_pool2d_reference(
            x, kernel, stride, padding, dilation)
        got = _decompositions._max_pool2d_with_indices_backward(
            g, x.detach(), kernel, stride, padding, dilation, False, indices)
        checked += 1
        if got.shape != expected.shape or not torch.equal(got, expected):
            differ += 1
            print(f"differs: kernel {kernel} stride {stride} padding "
                  f"{padding} dilation {dilation} {h}x{w} ties {ties}")
print(f"decomposition: {checked} configurations, {differ} differ")
# CHECK: decomposition: {{[0-9]+}} configurations, 0 differ

# The forward's maxima and indices against PyTorch's kernel, with -inf
# inputs: a padded window whose input elements are all -inf has its maximum
# at its first element inside the input, as PyTorch's kernel has it (the
# padding holds -inf too, and must not win the tie); with several NaNs in a
# window, the last one.
backward_differ, checked, differ = differ, 0, 0
for kernel, stride, padding, dilation in itertools.product(
        [2, 3, (3, 2)], [1, 2, (2, 1)], [1, (1, 0)], [1, 2]):
    k, p = _decompositions._pair(kernel), _decompositions._pair(padding)
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        continue
    for fill in ("-inf", "ties", "nan"):
        x = torch.randint(0, 3, (2, 3, 7, 9)).float()
        if fill == "-inf":
            x[..., :3, :] = -torch.inf
            x[..., :, -3:] = -torch.inf
        if fill == "nan":  # windows with several NaNs: PyTorch takes the last
            x[..., ::2, 1::2] = torch.nan
        y, indices = F.max_pool2d(x, kernel, stride, padding, dilation,
                                  return_indices=True)
        got_y, got_indices = _decompositions._max_pool2d_with_indices(
            x, kernel, stride, padding, dilation)
        checked += 1
        same_y = torch.equal(got_y.isnan(), y.isnan()) and torch.equal(
            got_y.nan_to_num(), y.nan_to_num())
        if not (same_y and torch.equal(got_indices, indices)):
            differ += 1
            print(f"forward differs: kernel {kernel} stride {stride} "
                  f"padding {padding} dilation {dilation} {fill}")
print(f"forward: {checked} configurations, {differ} differ")
# CHECK: forward: {{[0-9]+}} configurations, 0 differ


class Pools(nn.Module):
    """Three overlapping poolings: stride 1 with padding, a rectangular
    kernel with unequal strides, a dilated one (12 x 11 images)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 2 * 4, 5)

    def forward(self, x):
        x = F.max_pool2d(self.conv1(x).relu(), 3, stride=1, padding=1)
        x = F.max_pool2d(x, (3, 2), stride=(2, 1), padding=(1, 0))
        x = F.max_pool2d(self.conv2(x), 3, stride=2, padding=1, dilation=2)
        return self.fc(x.flatten(1))


def batch(gen, b=7):
    return (torch.randn(b, 1, 12, 11, generator=gen),
            torch.randint(0, 5, (b,), generator=gen))


failures = backward_differ + differ + zoo.check("pools", Pools, batch, zoo.classification_loss,
                              optimizers=("sgd",), ns=(3,))
# CHECK: pools sgd N=3: {{.*}} OK

# With OpenMP on 2 threads; the loader lets idle OpenMP workers spin for
# 1 ms only (KMP_BLOCKTIME=1) unless the user chose otherwise.
failures += zoo.check("pools-openmp", Pools, batch, zoo.classification_loss,
                      optimizers=("sgd",), ns=(3,), openmp=True,
                      num_threads=2)
print("KMP_BLOCKTIME", os.environ.get("KMP_BLOCKTIME"))
# CHECK: pools-openmp sgd N=3: {{.*}} OK
# CHECK: KMP_BLOCKTIME 1
sys.exit(failures)
