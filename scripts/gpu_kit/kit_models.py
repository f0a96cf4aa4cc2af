"""The models of the GPU acceptance kit (scripts/gpu-kit.sh), shared by the
build here and the run on the GPU machine (copied into the kit).

mlp: the MLP of docs/CPU.md (784-1024-1024-10, ReLU, cross-entropy, B = 256).
gpt: a GPT-style model (vocabulary 512, d = 128, 4 heads, context 64, one
    pre-LayerNorm block, causal attention (written out), GELU MLP, tied
    output, token-mean
    cross-entropy, B = 32), its loss under bf16 autocast on the device of its
    inputs (the trace runs on the CPU, the step on the GPU), fp32 parameters,
    optimizer state and gradient accumulators.
gpt-moe: gpt with its MLP a mixture of 8 GELU experts (d -> 2d -> d), top-2
    of a softmax router, written as transformers writes its experts in
    plain torch: the token-expert pairs sorted by expert, torch._grouped_mm
    by group ends counted from the sorted ids, the sort undone before the
    weighted sum over each token's experts (ga.grouped_matmul, generated
    gather kernels on the GPU); same batch, loss and precision as gpt.
gpt2-124m: GPT-2 small (12 layers, d 768, 12 heads, context 1024,
    vocabulary 50257, tied embedding, F.scaled_dot_product_attention with
    is_causal=True, tanh GELU MLP), micro-batches of 8 sequences.
llama-1b: a Llama in Llama-3.2-1B's shape (16 layers, d 2048, 32 heads, 8
    key/value heads, FFN 8192 SwiGLU, vocabulary 128256, tied embedding,
    RMSNorm, RoPE (theta 500000), context 2048), micro-batches of 8 sequences.
The scale models (SCALE) carry no weights and no batch: both are drawn from
seeds on the machine that runs them (make(name, seed, device=..., n=...));
their losses, like gpt's, run under bf16 autocast with fp32 parameters,
optimizer state and accumulators. make(name, config=...) builds the same
code at a tiny size (the CPU tests).
All trained with AdamW (lr 1e-3, weight decay 0.01).

Needs torch only.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = ("mlp", "gpt", "gpt-moe", "gpt2-124m", "llama-1b")
SCALE = ("gpt2-124m", "llama-1b")

# The scale models' configurations and micro-batch sizes (sequences).
CONFIGS = {
    "gpt2-124m": dict(vocab=50257, d=768, layers=12, heads=12, context=1024),
    "llama-1b": dict(vocab=128256, d=2048, layers=16, heads=32, kv_heads=8,
                     ffn=8192, context=2048, theta=500000.0),
}
MICRO_BATCH = {"gpt2-124m": 8, "llama-1b": 8}


class GPT(nn.Module):
    """A one-block causal GPT with tied embeddings. fused_attention: its
    attention as scaled_dot_product_attention (the CPU benchmark's form),
    else written out (see forward)."""

    def __init__(self, vocab=512, d=128, heads=4, context=64,
                 fused_attention=False):
        super().__init__()
        self.d, self.heads = d, heads
        self.fused_attention = fused_attention
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
        if self.fused_attention:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            # Causal attention written out: the frontend cannot trace
            # scaled_dot_product_attention under bf16 autocast (its
            # backward mixes dtypes in make_fx), and the math is the same.
            att = (q @ k.transpose(-2, -1)) * (d // h) ** -0.5
            causal = torch.ones(t, t, dtype=torch.bool,
                                device=ids.device).tril()
            y = att.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.ln(x))


class Experts(nn.Module):
    """Top-k routing of the tokens of x [B, T, d] over E two-layer GELU experts,
    each token's k pairs sorted by expert and multiplied by grouped products
    (torch._grouped_mm by group ends), the sort undone, the pairs' outputs
    weighted by the router's probabilities and summed per token."""

    def __init__(self, d, experts=8, top_k=2):
        super().__init__()
        self.experts, self.top_k = experts, top_k
        self.router = nn.Linear(d, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, d, 2 * d) * d ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, 2 * d, d) *
                               (2 * d) ** -0.5)

    def forward(self, tokens):
        k = self.top_k
        x = tokens.reshape(-1, tokens.shape[-1])
        top, chosen = torch.topk(F.softmax(self.router(x), -1), k, dim=-1)
        ids, perm = torch.sort(chosen.reshape(-1))
        rows = x[perm // k]
        counts = torch.histc(ids.float(), bins=self.experts, min=0,
                             max=self.experts - 1)
        ends = torch.cumsum(counts, dim=0, dtype=torch.int32)
        y = F.gelu(_grouped_mm(rows, self.w1, ends))
        y = _grouped_mm(y, self.w2, ends)
        inverse = torch.empty_like(perm)
        inverse[perm] = torch.arange(perm.shape[0], device=perm.device)
        y = y[inverse] * top.reshape(-1, 1)
        return y.reshape(-1, k, x.shape[-1]).sum(1).reshape(tokens.shape)


def _grouped_mm(rows, weights, ends):
    """torch._grouped_mm under autocast with autocast's cast written out:
    eager autocast casts both operands to bf16, but torch.compile's
    fake-tensor pass checks their types before any cast and refuses f32
    (torch 2.11). The same values either way."""
    kind = rows.device.type
    if torch.is_autocast_enabled(kind):
        dtype = torch.get_autocast_dtype(kind)
        rows, weights = rows.to(dtype), weights.to(dtype)
    return torch._grouped_mm(rows, weights, offs=ends)


class GPTMoE(GPT):
    """GPT with its MLP a mixture of experts (Experts)."""

    def __init__(self, experts=8, top_k=2, **config):
        super().__init__(**config)
        self.mlp = Experts(self.d, experts, top_k)


class GPT2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, d))
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


class GPT2(nn.Module):
    """GPT-2 (pre-LayerNorm blocks, learned positions, tied output)."""

    def __init__(self, vocab, d, layers, heads, context):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(GPT2Block(d, heads)
                                    for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(t, device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class RMSNorm(nn.Module):
    """Llama's RMSNorm, in float32 whatever the input's type."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.square().mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rotary(x, cos, sin):
    """RoPE on [B, H, T, hd] (halves rotated, as Llama's reference code)."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.attn_norm, self.ffn_norm = RMSNorm(d), RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.w1 = nn.Linear(d, ffn, bias=False)
        self.w3 = nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=True)
        x = x + self.wo(y.transpose(1, 2).reshape(b, t, d))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    """Llama 3 (RMSNorm, RoPE, grouped-query attention, SwiGLU, tied)."""

    def __init__(self, vocab, d, layers, heads, kv_heads, ffn, context,
                 theta=500000.0):
        super().__init__()
        self.hd, self.theta = d // heads, theta
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(LlamaBlock(d, heads, kv_heads, ffn)
                                    for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.embed.weight
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids):
        t = ids.shape[1]
        # The rotation angles, computed in the step (float32; no buffer).
        half = torch.arange(0, self.hd, 2, device=ids.device).float()
        inv = 1.0 / (self.theta ** (half / self.hd))
        angles = torch.outer(torch.arange(t, device=ids.device).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos(), angles.sin()
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def mlp_loss(m, x, y):
    return F.cross_entropy(m(x), y)


def gpt_loss(m, ids, targets):
    with torch.autocast(ids.device.type, dtype=torch.bfloat16):
        logits = m(ids)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


def make(name, seed=0, device="cpu", n=1, config=None, micro_batch=None):
    """(model, loss_fn, batch) on `device`, from `seed`. A scale model's
    batch has n micro-batches of MICRO_BATCH[name] sequences (micro_batch
    instead when given); `config` replaces its configuration's entries (a
    tiny model of the same code)."""
    torch.manual_seed(seed)
    if name in SCALE:
        config = dict(CONFIGS[name], **(config or {}))
        with torch.device(device):
            model = GPT2(**config) if name == "gpt2-124m" else \
                Llama(**config)
        b = n * (micro_batch or MICRO_BATCH[name])
        g = torch.Generator(device).manual_seed(seed + 1)
        shape = (b, config["context"])
        ids = torch.randint(0, config["vocab"], shape, generator=g,
                            device=device)
        targets = torch.randint(0, config["vocab"], shape, generator=g,
                                device=device)
        return model, gpt_loss, (ids, targets)
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
    if name == "gpt-moe":
        ids = torch.randint(0, 512, (32, 64), generator=g)
        targets = torch.randint(0, 512, (32, 64), generator=g)
        return GPTMoE(), gpt_loss, (ids, targets)
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
