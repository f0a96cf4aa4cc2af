# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# F.scaled_dot_product_attention traced as PyTorch's fused CPU pair
# (forward saving the logsumexp, backward recomputing from it; _attention),
# in float32 and under torch.autocast("cpu", dtype=torch.bfloat16): causal,
# with a boolean and an additive padding mask, grouped key/value heads.
# N = 1 and N = 4 of 6 samples (a remainder). The GPU kit's GPT-2 and Llama
# (SDPA is_causal, grouped heads) are in torch-kit-models.py. Not here:
# transformers' GPT-2 and Llama under autocast (their masks become bf16
# constants, which torch-mlir's importer cannot write without the
# ml_dtypes package). Criterion (model_zoo.verdict): SGD within 1e-4 of
# PyTorch's float32 step; AdamW and autocast no further from the float64
# step than PyTorch's own step (2x in RMS, 10x at the worst element).

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import model_zoo

model_zoo.quiet()


class PaddedAttention(nn.Module):
    """Token embeddings, one attention layer whose keys are masked by the
    batch's padding mask (`kind`: "bool", "additive", or "causal", the
    causal mask and the padding in one boolean mask), 4 query heads on 2
    key/value heads, a tied output."""

    def __init__(self, kind, vocab=model_zoo.VOCAB, d=16, heads=4):
        super().__init__()
        self.kind, self.heads = kind, heads
        self.tok = nn.Embedding(vocab, d)
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)

    def forward(self, ids, mask):
        b, t = ids.shape
        x = self.tok(ids)
        hd = x.shape[-1] // self.heads
        q = self.q(x).view(b, t, self.heads, hd).transpose(1, 2)
        k, v = (z.reshape(b, t, 2, hd).transpose(1, 2)
                for z in self.kv(x).split(2 * hd, dim=-1))
        keep = (mask != 0)[:, None, None, :]
        if self.kind == "causal":
            keep = keep & torch.ones(t, t, dtype=torch.bool).tril()
        attn_mask = keep if self.kind != "additive" else \
            torch.where(keep, 0.0, -1e4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                           enable_gqa=True)
        x = x + self.out(y.transpose(1, 2).reshape(b, t, -1))
        return self.ln(x) @ self.tok.weight.t()


def padded_loss(model, ids, mask, labels):
    logits = model(ids, mask)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                           labels.reshape(-1), ignore_index=-100)


for kind in ("bool", "additive", "causal"):
    model_zoo.MODELS["sdpa-" + kind] = model_zoo.Case(
        lambda kind=kind: PaddedAttention(kind), model_zoo.padded_text,
        padded_loss)

# CHECK: sdpa-bool sgd N=1: {{.*}} OK
# CHECK: sdpa-additive adamw N=4: {{.*}} OK
failures = model_zoo.run([("sdpa-bool", "sgd", 1),
                          ("sdpa-additive", "adamw", 4)])
# CHECK: sdpa-bool adamw N=1 autocast: {{.*}} OK
# CHECK: sdpa-causal adamw N=4 autocast: {{.*}} OK
failures += model_zoo.run([("sdpa-bool", "adamw", 1),
                           ("sdpa-causal", "adamw", 4)],
                          autocast=torch.bfloat16)
sys.exit(failures)
