# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Pooling windows beyond the tiling ones: max_pool2d with ceil_mode=True
# and avg_pool2d with padding, overlap, ceil_mode, count_include_pad both
# ways and divisor_override, as the trace decomposes them. First the
# decompositions against PyTorch's own kernels, bit for bit (values,
# indices, input gradients), over kernels, strides, paddings, dilations
# and sizes, including the sizes where PyTorch drops the last window of
# ceil_mode because it would start in the right padding, and the 3-d
# poolings; then a step of a CNN with such poolings (2-d; 1-d, which
# PyTorch computes with the 2-d ones; 3-d) against PyTorch's step.

import itertools
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo
from ga_mlir.torch import _decompositions, _pooling

torch.manual_seed(0)
pair = _decompositions._pair


def fits(kernel, padding, dilation, h, w):
    """PyTorch accepts the padding (at most half the kernel) and a window
    fits in the padded input."""
    k, p = pair(kernel), pair(padding)
    return p[0] <= k[0] // 2 and p[1] <= k[1] // 2 and \
        h + 2 * p[0] > dilation * (k[0] - 1) and \
        w + 2 * p[1] > dilation * (k[1] - 1)


def dropped(kernel, stride, padding, dilation, h, w):
    """Whether ceil_mode's rule drops a last window (one that would start
    in the right padding) along some dimension."""
    out = []
    for n, k, s, p in zip((h, w), pair(kernel), pair(stride or kernel),
                          pair(padding)):
        span = dilation * (k - 1) + 1
        out.append((n + 2 * p - span + s - 1) // s + 1 !=
                   _pooling.output_size(n, k, s, p, dilation, True)[0])
    return any(out)


checked = differ = cut = 0
for kernel, stride, padding, dilation, h, w in itertools.product(
        [2, 3, (3, 2)], [2, 3, (2, 1)], [0, 1], [1, 2], [5, 8], [6, 9]):
    if not fits(kernel, padding, dilation, h, w):
        continue
    for ties in (False, True):
        x = zoo.pooling_input((2, 3, h, w), ties)
        y, indices, g, expected = zoo.max_pool2d_reference(
            x, kernel, stride, padding, dilation, ceil_mode=True)
        got_y, got_indices = _decompositions._max_pool2d_with_indices(
            x.detach(), kernel, stride, padding, dilation, True)
        got = _decompositions._max_pool2d_with_indices_backward(
            g, x.detach(), kernel, stride, padding, dilation, True, indices)
        checked += 1
        cut += dropped(kernel, stride, padding, dilation, h, w)
        if not (got_y.shape == y.shape and torch.equal(got_y, y) and
                torch.equal(got_indices, indices) and
                torch.equal(got, expected)):
            differ += 1
            print(f"max differs: kernel {kernel} stride {stride} padding "
                  f"{padding} dilation {dilation} {h}x{w} ties {ties}")
print(f"max_pool2d ceil_mode: {checked} configurations "
      f"({cut} with a dropped window), {differ} differ")
# CHECK: max_pool2d ceil_mode: {{[0-9]+}} configurations ({{[1-9][0-9]*}} with a dropped window), 0 differ
failures = differ

checked = differ = cut = 0
for kernel, stride, padding, h, w, ceil, include, divisor in \
        itertools.product([2, 3, (3, 2)], [None, 1, 2, (2, 1)], [0, 1],
                          [5, 8], [6, 9], [False, True], [False, True],
                          [None, 5]):
    if not fits(kernel, padding, 1, h, w):
        continue
    x = torch.randn(2, 3, h, w, requires_grad=True)
    y = F.avg_pool2d(x, kernel, stride, padding, ceil, include, divisor)
    g = torch.randn_like(y)
    (expected,) = torch.autograd.grad(y, x, g)
    got_y = _pooling.avg_pool2d(x.detach(), kernel, stride, padding, ceil,
                                include, divisor)
    got = _decompositions._avg_pool2d_backward(
        g, x.detach(), kernel, stride, padding, ceil, include, divisor)
    checked += 1
    cut += ceil and dropped(kernel, stride, padding, 1, h, w)
    if not (got_y.shape == y.shape and torch.equal(got_y, y) and
            torch.equal(got, expected)):
        differ += 1
        print(f"avg differs: kernel {kernel} stride {stride} padding "
              f"{padding} {h}x{w} ceil {ceil} count_include_pad {include} "
              f"divisor {divisor}")
print(f"avg_pool2d: {checked} configurations ({cut} with a dropped "
      f"window), {differ} differ")
# CHECK: avg_pool2d: {{[0-9]+}} configurations ({{[1-9][0-9]*}} with a dropped window), 0 differ
failures += differ

# The same for 3-d pooling (any number of dimensions, _pooling).
checked = differ = 0
for kernel, stride, padding, dilation, ceil in itertools.product(
        [2, (3, 2, 2)], [1, (2, 1, 3)], [0, 1], [1, 2], [False, True]):
    if kernel == 2 and padding and dilation == 2:
        continue
    x = torch.randint(0, 3, (2, 2, 5, 6, 7)).float()
    x[..., :2, :, :] = -torch.inf  # windows of -inf with padding
    x.requires_grad_(True)
    y, indices = F.max_pool3d(x, kernel, stride, padding, dilation,
                              ceil_mode=ceil, return_indices=True)
    g = torch.randn_like(y)
    (expected,) = torch.autograd.grad(y, x, g)
    got_y, got_indices = _pooling.max_pool_with_indices(
        x.detach(), 3, kernel, stride, padding, dilation, ceil)
    got = _pooling.max_pool_with_indices_backward(
        g, x.detach(), 3, kernel, stride, padding, dilation, ceil, indices)
    checked += 1
    if not (got_y.shape == y.shape and torch.equal(got_y, y) and
            torch.equal(got_indices, indices) and torch.equal(got, expected)):
        differ += 1
        print(f"max3d differs: kernel {kernel} stride {stride} padding "
              f"{padding} dilation {dilation} ceil {ceil}")
for kernel, stride, padding, ceil, include in itertools.product(
        [2, (3, 2, 2)], [1, (2, 1, 3)], [0, 1], [False, True],
        [False, True]):
    x = torch.randn(2, 2, 5, 6, 7, requires_grad=True)
    y = F.avg_pool3d(x, kernel, stride, padding, ceil, include)
    g = torch.randn_like(y)
    (expected,) = torch.autograd.grad(y, x, g)
    got_y = _pooling.avg_pool(x.detach(), 3, kernel, stride, padding, ceil,
                              include)
    got = _pooling.avg_pool_backward(g, x.detach(), 3, kernel, stride,
                                     padding, ceil, include, None)
    checked += 1
    if not (got_y.shape == y.shape and torch.equal(got_y, y) and
            torch.equal(got, expected)):
        differ += 1
        print(f"avg3d differs: kernel {kernel} stride {stride} padding "
              f"{padding} ceil {ceil} count_include_pad {include}")
print(f"3-d: {checked} configurations, {differ} differ")
# CHECK: 3-d: {{[0-9]+}} configurations, 0 differ
failures += differ


class CeilPools(nn.Module):
    """SqueezeNet's and GoogLeNet's pooling (3 x 3, stride 2, ceil_mode;
    its indices used too),
    a padded ceil_mode max pooling, overlapping average poolings (padding
    not counted; ceil_mode with padding counted), the 1-d and 3-d forms,
    on 11 x 10 images."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 2 * 2 + 4 + 1, 5)

    def forward(self, x):
        x, where = F.max_pool2d(self.conv1(x).relu(), 3, 2, ceil_mode=True,
                                return_indices=True)  # 5x5
        x = x + where * 1e-3  # the indices used
        x = F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)
        x = F.max_pool2d(self.conv2(x), 2, 2, 1, ceil_mode=True)  # 3x3
        x = F.avg_pool2d(x, 2, 2, 1, ceil_mode=True)  # 2x2
        line = F.max_pool1d(x.flatten(2), 3, 2, ceil_mode=True)  # 2
        line = F.avg_pool1d(line, 2, 1, 1, ceil_mode=True)  # 3
        cube = F.max_pool3d(x.unsqueeze(1), 2, (1, 2, 2), (0, 1, 1),
                            ceil_mode=True)  # 3x2x2
        cube = F.avg_pool3d(cube, 2, 1, 1, count_include_pad=False)
        return self.fc(torch.cat([x.flatten(1), line[..., 1:-1].flatten(1),
                                  cube.mean((2, 3, 4))], 1))


def batch(gen, b=7):
    return (torch.randn(b, 1, 11, 10, generator=gen),
            torch.randint(0, 5, (b,), generator=gen))


failures += zoo.check("ceil-pools", CeilPools, batch,
                      zoo.classification_loss, optimizers=("sgd",), ns=(3,),
                      steps=2)
# CHECK: ceil-pools sgd N=3: {{.*}} OK
sys.exit(failures)
