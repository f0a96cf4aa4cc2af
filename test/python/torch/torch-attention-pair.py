# RUN: env PYTHONPATH=%ga_python_path %torch_python %s | FileCheck %s
#
# The decomposition of PyTorch's fused CPU attention pair (_attention:
# aten._scaled_dot_product_flash_attention_for_cpu and its backward), run
# eagerly against the float64 math of attention (softmax(scale q k^T + mask)
# v and its gradients by autograd), next to PyTorch's own kernel: for
# float32, bf16 and float64 inputs; causal (also with fewer queries than
# keys), boolean-derived and additive masks, rows whose every key is masked,
# grouped key/value heads, an explicit scale; three seeds. Criterion: our
# largest error from float64 at most twice PyTorch's kernel's plus 4 units
# in the last place of the type at the largest value (a wrong formula, a
# lost mask or group, errs by the values themselves); the results' and the
# logsumexp's types and shapes PyTorch's.
#
# Each case runs twice: whole (the default BLOCK_ROWS exceeds these
# sizes), and in blocks of 2 queries, where the causal, sliding-window and
# empty-row masks take the block form (queries against the keys the mask
# leaves them); the count of block forms taken is checked too.

import sys

import torch

from ga_mlir.torch import _attention
from ga_mlir.torch._attention import (flash_attention_for_cpu,
                                      flash_attention_for_cpu_backward)

aten = torch.ops.aten


def reference(q, k, v, g, is_causal, mask, scale):
    """(out, dq, dk, dv) in float64 by autograd over the plain formula."""
    q, k, v = (t.double().requires_grad_() for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    kk, vv = (t.repeat_interleave(group, dim=1) for t in (k, v))
    s = q @ kk.transpose(-2, -1) * (scale or q.shape[-1] ** -0.5)
    if is_causal:
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool).tril(),
                          float("-inf"))
    if mask is not None:
        s = s + mask.double()
    empty = (s == float("-inf")).all(-1, keepdim=True)  # rows: out 0
    p = torch.softmax(s.masked_fill(empty, 0.0), -1).masked_fill(empty, 0.0)
    out = p @ vv
    out.backward(g.double())
    return out.detach(), q.grad, k.grad, v.grad


def error(a, b):
    return (a.double() - b).abs().max().item()


def case(dtype, seed, is_causal, mask_kind, kv_heads, tq, scale):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(2, 4, tq, 8, generator=gen).to(dtype)
    k = torch.randn(2, kv_heads, 8, 8, generator=gen).to(dtype)
    v = torch.randn(2, kv_heads, 8, 8, generator=gen).to(dtype)
    g = torch.randn(2, 4, tq, 8, generator=gen).to(dtype)
    mask = None
    if mask_kind in ("bool", "empty rows"):
        keep = torch.rand(2, 1, tq, 8, generator=gen) > 0.3
        if mask_kind == "empty rows":
            keep[:, :, 1] = False
            keep[:, :, :, 6:] = False
        mask = torch.where(keep, 0.0, float("-inf")).to(dtype)
    elif mask_kind == "window":  # keys i - 2 .. i of query i
        i, j = torch.arange(tq)[:, None], torch.arange(8)[None, :]
        keep = ((j <= i) & (j > i - 3)).expand(2, 1, tq, 8)
        mask = torch.where(keep, 0.0, float("-inf")).to(dtype)
    elif mask_kind == "additive":
        mask = torch.randn(2, 1, tq, 8, generator=gen).to(dtype)
    ref = reference(q, k, v, g, is_causal, mask, scale)
    theirs_out, lse = aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, is_causal, attn_mask=mask, scale=scale)
    theirs = (theirs_out,) + tuple(
        aten._scaled_dot_product_flash_attention_for_cpu_backward(
            g, q, k, v, theirs_out, lse, 0.0, is_causal, attn_mask=mask,
            scale=scale))
    out, our_lse = flash_attention_for_cpu(q, k, v, 0.0, is_causal,
                                           attn_mask=mask, scale=scale)
    ours = (out,) + tuple(flash_attention_for_cpu_backward(
        g, q, k, v, out, our_lse, 0.0, is_causal, attn_mask=mask,
        scale=scale))
    ok = our_lse.dtype == lse.dtype and our_lse.shape == lse.shape
    for a, b, r in zip(ours, theirs, ref):
        ok &= a.dtype == b.dtype and a.shape == b.shape
        ulp = torch.finfo(dtype).eps * r.abs().max().item()
        ok &= error(a, r) <= 2 * error(b, r) + 4 * ulp
    return ok


taken = []
blocks = _attention._blocks
_attention._blocks = lambda *a: taken.append(blocks(*a)) or taken[-1]
failures = 0
for rows in (_attention.BLOCK_ROWS, 2):
    _attention.BLOCK_ROWS = rows
    for dtype in (torch.float32, torch.bfloat16, torch.float64):
        taken.clear()
        ok = all(case(dtype, seed, *args) for seed in range(3) for args in (
            (True, None, 4, 8, None), (True, None, 2, 5, None),
            (False, "bool", 4, 8, None), (False, "additive", 2, 8, 0.3),
            (False, "empty rows", 4, 8, None), (True, "additive", 4, 8, None),
            (False, "window", 2, 8, None)))
        failures += not ok
        forms = sum(b is not None for b in taken)
        print(f"{dtype}, blocks of {rows}: {'OK' if ok else 'FAIL'}, "
              f"{forms} of {len(taken)} calls in blocks")
# CHECK: torch.float32, blocks of 64: OK, 0 of 42 calls in blocks
# CHECK: torch.bfloat16, blocks of 64: OK, 0 of 42 calls in blocks
# CHECK: torch.float64, blocks of 64: OK, 0 of 42 calls in blocks
# Causal (2 cases), causal with a mask, the window, the empty rows (keys
# 6 and 7 excluded), in forward and backward, 3 seeds.
# CHECK: torch.float32, blocks of 2: OK, 30 of 42 calls in blocks
# CHECK: torch.bfloat16, blocks of 2: OK, 30 of 42 calls in blocks
# CHECK: torch.float64, blocks of 2: OK, 30 of 42 calls in blocks
sys.exit(failures)
