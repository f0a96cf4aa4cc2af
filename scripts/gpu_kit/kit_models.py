"""The models of the GPU acceptance kit (scripts/gpu-kit.sh), shared by the
build here and the run on the GPU machine (copied into the kit).

mlp: the MLP of docs/CPU.md (784-1024-1024-10, ReLU, cross-entropy, B = 256).
gpt: a GPT-style model (vocabulary 512, d = 128, 4 heads, context 64, one
    pre-LayerNorm block, causal attention (written out), GELU MLP, tied
    output, token-mean
    cross-entropy, B = 32), its loss under bf16 autocast on the device of its
    inputs (the trace runs on the CPU, the step on the GPU), fp32 parameters,
    optimizer state and gradient accumulators.
Both trained with AdamW (lr 1e-3, weight decay 0.01).

Needs torch only.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = ("mlp", "gpt")


class GPT(nn.Module):
    def __init__(self, vocab=512, d=128, heads=4, context=64):
        super().__init__()
        self.d, self.heads = d, heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.ln1, self.ln2, self.ln = (nn.LayerNorm(d) for _ in range(3))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, ids):
        b, t = ids.shape
        d, h = self.d, self.heads
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        # Causal attention written out: the frontend cannot trace
        # scaled_dot_product_attention under bf16 autocast (its backward
        # mixes dtypes in make_fx), and the math is the same.
        att = (q @ k.transpose(-2, -1)) * (d // h) ** -0.5
        causal = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()
        y = att.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln(x))


def mlp_loss(m, x, y):
    return F.cross_entropy(m(x), y)


def gpt_loss(m, ids, targets):
    with torch.autocast(ids.device.type, dtype=torch.bfloat16):
        logits = m(ids)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


def make(name, seed=0):
    """(model, loss_fn, batch) on the CPU, from `seed`."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(),
                              nn.Linear(1024, 1024), nn.ReLU(),
                              nn.Linear(1024, 10))
        batch = (torch.randn(256, 784, generator=g),
                 torch.randint(0, 10, (256,), generator=g))
        return model, mlp_loss, batch
    if name == "gpt":
        ids = torch.randint(0, 512, (32, 64), generator=g)
        targets = torch.randint(0, 512, (32, 64), generator=g)
        return GPT(), gpt_loss, (ids, targets)
    raise ValueError(f"unknown model {name!r} (one of {MODELS})")


def optimizer_for(model):
    return torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)


def torch_accumulation_step(model, loss_fn, optimizer, batch, n):
    """PyTorch's own gradient accumulation: N micro-batches, each loss
    scaled by its share of the batch, backward, then one optimizer step.
    Returns the loss of the whole batch (a tensor, not synchronized)."""
    b = batch[0].shape[0]
    total = None
    for chunk in zip(*(t.tensor_split(n) for t in batch)):
        loss = loss_fn(model, *chunk) * (chunk[0].shape[0] / b)
        loss.backward()
        total = loss.detach() if total is None else total + loss.detach()
    optimizer.step()
    optimizer.zero_grad()
    return total
