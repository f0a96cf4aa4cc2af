#!/usr/bin/env python3
"""Convolutions on GEMMs or through a convolution library: which to call.

For every convolution of the zoo's ResNet-18 (test/python/torch/model_zoo.py:
16 channels in the stem, 64 x 64 images) at a micro-batch of --batch
samples, the forward and the filter gradient timed three ways, 1 thread:

  onednn:   PyTorch's convolution with its oneDNN backend
            (torch.backends.mkldnn enabled; oneDNN 3.x bundled with torch)
  torch:    PyTorch's convolution with oneDNN disabled (its own im2col and
            MKL sgemm: "slow_conv2d")
  im2col:   what ga-convolutions-to-products computes: an im2col copy of
            each sample (numpy, strided view then a contiguous copy) and one
            sgemm per sample (numpy's OpenBLAS), the filter gradient summed
            into one accumulator (beta = 1)

usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
           .venv/bin/python bench/conv_library.py [--batch 4] [--reps 20]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "python", "torch"))
import model_zoo  # noqa: E402


def shapes(batch):
    """(input shape, conv module) of each convolution of the zoo's ResNet."""
    model = model_zoo.resnet18().eval()
    seen = []
    hooks = [m.register_forward_hook(
        lambda m, i, o: seen.append((tuple(i[0].shape), m)))
        for m in model.modules() if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        model(torch.randn(batch, 3, 64, 64))
    for h in hooks:
        h.remove()
    return seen


def best(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def im2col(x, k, stride, padding):
    """[B, C*K*K, P] columns of x [B, C, H, W] (numpy, zero padding)."""
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    b, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    s = x.strides
    view = np.lib.stride_tricks.as_strided(
        x, (b, c, k, k, oh, ow),
        (s[0], s[1], s[2], s[3], s[2] * stride, s[3] * stride))
    return np.ascontiguousarray(view).reshape(b, c * k * k, oh * ow), oh, ow


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    torch.set_num_threads(1)
    print("| input | conv | fwd oneDNN | fwd torch | fwd im2col | "
          "dW oneDNN | dW torch | dW im2col |  (microseconds)")
    print("|" + " --- |" * 8)
    total = np.zeros(6)
    for shape, conv in shapes(a.batch):
        k, s, pad = conv.kernel_size[0], conv.stride[0], conv.padding[0]
        x = torch.randn(shape)
        w = conv.weight.detach().clone()
        y = F.conv2d(x, w, None, s, pad)
        dy = torch.randn(y.shape)
        row = []
        for mkldnn in (True, False):
            with torch.backends.mkldnn.flags(enabled=mkldnn):
                row.append(best(lambda: F.conv2d(x, w, None, s, pad), a.reps))
        xn, wn, dyn = x.numpy(), w.numpy(), dy.numpy()
        f, m = wn.shape[0], wn[0].size
        w2 = wn.reshape(f, m)

        def forward():
            cols, oh, ow = im2col(xn, k, s, pad)
            out = np.empty((shape[0], f, oh * ow), np.float32)
            for n in range(shape[0]):
                np.matmul(w2, cols[n], out=out[n])
            return out
        row.append(best(forward, a.reps))
        np.testing.assert_allclose(forward().reshape(y.shape), y.numpy(),
                                   rtol=1e-4, atol=1e-4)
        for mkldnn in (True, False):
            with torch.backends.mkldnn.flags(enabled=mkldnn):
                row.append(best(lambda: torch.ops.aten.convolution_backward(
                    dy, x, w, None, [s, s], [pad, pad], [1, 1], False,
                    [0, 0], 1, [False, True, False]), a.reps))
        d2 = dyn.reshape(shape[0], f, -1)

        def filter_grad():
            cols, _, _ = im2col(xn, k, s, pad)
            acc = np.zeros((f, m), np.float32)
            for n in range(shape[0]):
                acc += d2[n] @ cols[n].T
            return acc
        row.append(best(filter_grad, a.reps))
        total += row
        print(f"| {list(shape)} | {f}x{shape[1]}x{k}x{k}/{s} | "
              + " | ".join(f"{t * 1e6:.0f}" for t in row) + " |")
    print("| total | | " + " | ".join(f"{t * 1e6:.0f}" for t in total) + " |")


if __name__ == "__main__":
    main()
