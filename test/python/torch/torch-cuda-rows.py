# REQUIRES: cuda-device
# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# On a GPU: row kernels at GPT-2's widths (a warp per row for LayerNorm's
# rows of 768, a block per row for the cross-entropy's rows of 8192;
# docs/GPU.md, "A warp or a block per row") against numpy in float64: a
# LayerNorm -> linear -> cross-entropy step with SGD, 512 tokens in 2
# micro-batches of 256 rows, compiled for the GPU, its loss and updated
# parameters compared with the full-batch step computed by hand in float64,
# for three seeds. fp32 everywhere (no autocast): the error is fp32 rounding,
# reordered by the lanes' tree reductions.

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import compile_train_step

D, V, T, LR, EPS = 768, 8192, 512, 0.5, 1e-5


def loss_fn(m, x, y):
    return F.cross_entropy(m(x), y)


def reference(g, b, w, x, y):
    """The full-batch SGD step in float64: (loss, new g, new b, new w)."""
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + EPS)
    h = xhat * g + b
    logits = h @ w.T
    z = logits - logits.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    n = x.shape[0]
    loss = -np.log(p[np.arange(n), y]).mean()
    dl = p.copy()
    dl[np.arange(n), y] -= 1
    dl /= n
    dw = dl.T @ h
    dh = dl @ w
    dg = (dh * xhat).sum(0)
    db = dh.sum(0)
    return loss, g - LR * dg, b - LR * db, w - LR * dw


worst = 0.0
for seed in range(3):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, V, bias=False))
    with torch.no_grad():
        model[0].weight.add_(0.1 * torch.randn(D))
        model[0].bias.add_(0.1 * torch.randn(D))
    x = torch.randn(T, D)
    y = torch.randint(0, V, (T,))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    before = [p.detach().double().numpy().copy() for p in model.parameters()]
    step = compile_train_step(model, loss_fn, opt, (x, y), micro_batches=2,
                              target="cuda", row_warp_min=32,
                              row_block_min=1024)
    model.cuda()
    loss = step(x.cuda(), y.cuda())
    torch.cuda.synchronize()
    ref = reference(*before, x.double().numpy(), y.numpy())
    got = [float(loss)] + [p.detach().cpu().double().numpy()
                           for p in model.parameters()]
    for name, r, a in zip(("loss", "ln.weight", "ln.bias", "linear.weight"),
                          ref, got):
        # Relative to the size of the update (or of the loss): what fp32
        # rounding of the gradient can move.
        scale = abs(r) if name == "loss" else \
            np.abs(r - before[["ln.weight", "ln.bias",
                               "linear.weight"].index(name)]).max()
        err = float(np.abs(np.asarray(a) - r).max() / scale)
        worst = max(worst, err)
        print(f"seed {seed} {name}: max error / update {err:.2e}")
print("worst:", f"{worst:.2e}", "PASS" if worst < 1e-3 else "FAIL")
# CHECK: seed 0 loss
# CHECK: worst: {{.*}} PASS
