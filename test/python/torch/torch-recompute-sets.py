# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The recompute sets of --ga-rematerialize are exact: a step compiled with
# one equals the same step compiled without it bit for bit (torch.equal on
# the losses, the parameters and the optimizer states after two steps, the
# library's CPU options with shared buffers and BLAS), on
# * a two-layer GPT with dropout on the attention probabilities and on the
#   residual stream (the masks are keyed by the sample index: a recomputed
#   mask is the kept one), T = 16 > 2 x the head size, so that the scores
#   outgrow the values they are computed from (recompute=attention has
#   something to recompute): attention, products and layers;
# * the same GPT with its head tied to the token embeddings (GPT-2's,
#   RoBERTa's MLM head): the embedding's gradient is the sum of two
#   accumulators after the loop, read by both Adam moments, which
#   recompute=pointwise copies at each (the CPU lowering must merge the
#   accumulators alike with and without the copies);
# * transformers' GPT-Neo (local and global attention, attention dropout)
#   under products and layers: its copy of the softmax lands in a loop the
#   vectorizer treats otherwise than the kept one (scalar, not vector), so
#   its exp is the kept one only if scalar and vector exp are one
#   implementation (ga-vectorize-math's `scalars`, set by ga-lower-to-cpu);
# * transformers' T5 (encoder-decoder, relative position buckets, RMSNorm,
#   gated GELU, dropout) under pointwise: the copies of its dropout masks
#   (from i64 random bits) and of its loss's one-hot selection (linalg.index)
#   are fused into row sums, whose split into vector lanes must not depend
#   on them (ga-split-row-reductions);
# * a convolution with BatchNorm (batch statistics: reductions over the
#   micro-batch, never recomputed) and ReLU: layers (the only set that
#   recomputes a buffer of it);
# (pointwise: ga-verify --rtol=0 in torch-rematerialize.py; each compile
# costs seconds, CI's time is short)
# and, without dropout, the GPT step with recomputation equals PyTorch's
# full-batch step under the zoo's tolerance (zoo.check).

import sys

import torch
from torch import nn
from torch.nn import functional as F

import model_zoo
import zoo
from ga_mlir.torch import compile_train_step

failures = 0
T, VOCAB = 16, 29


class Layer(nn.Module):
    """Pre-LayerNorm causal attention (dropout on the probabilities, as
    GPT-2 has it) and a GELU MLP, dropout on each sublayer's output."""

    def __init__(self, d, heads, p):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.drop = nn.Dropout(p)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        p = self.drop(F.softmax(scores.masked_fill(causal, float("-inf")),
                                dim=-1))
        return self.proj((p @ v).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.drop(self.attention(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class AttentionGPT(nn.Module):
    def __init__(self, d=16, heads=4, layers=2, p=0.2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(T, d)
        self.layers = nn.Sequential(*[Layer(d, heads, p)
                                      for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        return self.head(self.ln(self.layers(x)))


class TiedGPT(AttentionGPT):
    def __init__(self):
        super().__init__()
        self.head.weight = self.tok.weight


def gpt_batch(gen):
    return zoo.lm_batch(gen, b=4, t=T, vocab=VOCAB)


def run(make_model, make_batch, loss_fn, recompute, steps=2, **options):
    """The losses, parameters, optimizer states and buffers after `steps`
    steps of the step compiled with `recompute` (N = 2, AdamW, shared
    buffers; `options` besides), from the same seeds."""
    torch.manual_seed(1)
    model = make_model()
    opt = zoo.OPTIMIZERS["adamw"](model)
    gen = torch.Generator().manual_seed(2)
    batches = [make_batch(gen) for _ in range(steps)]
    step = compile_train_step(model, loss_fn, opt, batches[0],
                              micro_batches=2, recompute=recompute,
                              share_buffers=True, **options)
    torch.manual_seed(3)  # the dropout masks' key
    losses = [step(*batch).detach().clone() for batch in batches]
    states = [t for p in model.parameters() for t in opt.state[p].values()
              if torch.is_tensor(t)]
    return losses + [p.detach() for p in model.parameters()] + states + \
        list(model.buffers())


def bitwise(name, sets, make_model, make_batch, loss_fn, **options):
    global failures
    base = run(make_model, make_batch, loss_fn, "none", **options)
    for recompute in sets:
        other = run(make_model, make_batch, loss_fn, recompute, **options)
        same = len(base) == len(other) and all(
            torch.equal(a, b) for a, b in zip(base, other))
        worst = max(((a.double() - b.double()).abs().max().item()
                     for a, b in zip(base, other)), default=0.0)
        failures += not same
        print(f"{name} recompute={recompute}: bitwise {same} "
              f"(max |diff| {worst:.3g})")


# CHECK: gpt-dropout recompute=attention: bitwise True
# CHECK: gpt-dropout recompute=products: bitwise True
# CHECK: gpt-dropout recompute=layers: bitwise True
bitwise("gpt-dropout", ("attention", "products", "layers"), AttentionGPT,
        gpt_batch, zoo.lm_loss)
# CHECK: gpt-tied recompute=pointwise: bitwise True
bitwise("gpt-tied", ("pointwise",), TiedGPT, gpt_batch, zoo.lm_loss)
# CHECK: gpt-neo recompute=products: bitwise True
# CHECK: gpt-neo recompute=layers: bitwise True
bitwise("gpt-neo", ("products", "layers"), lambda: model_zoo._hf(
    "GPTNeoConfig", "GPTNeoForCausalLM", vocab_size=model_zoo.VOCAB,
    hidden_size=16, num_layers=2, num_heads=2,
    attention_types=[[["global", "local"], 1]], window_size=4,
    max_position_embeddings=16, embed_dropout=0.1, attention_dropout=0.1,
    resid_dropout=0.1, bos_token_id=1, eos_token_id=1),
    lambda gen: model_zoo.padded_text(gen, 4, t=8), model_zoo.hf_loss)
# CHECK: t5 recompute=pointwise: bitwise True
bitwise("t5", ("pointwise",), lambda: model_zoo._hf(
    "T5Config", "T5ForConditionalGeneration", vocab_size=model_zoo.VOCAB,
    d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
    num_heads=2, relative_attention_num_buckets=8,
    relative_attention_max_distance=8, dropout_rate=0.1,
    feed_forward_proj="gated-gelu", decoder_start_token_id=0, pad_token_id=0,
    eos_token_id=1), lambda gen: model_zoo.padded_text(gen, 4, t=8),
    model_zoo.hf_loss)
# CHECK: conv-bn recompute=layers: bitwise True
bitwise("conv-bn", ("layers",), zoo.BatchNormCNN, zoo.cnn_batch,
        zoo.classification_loss, recompute_statistics=True)

# Against PyTorch's full-batch step, without dropout.
# CHECK: gpt-layers adamw N=2: {{.*}} OK
failures += zoo.check("gpt-layers", lambda: AttentionGPT(p=0.0), gpt_batch,
                      zoo.lm_loss, optimizers=("adamw",), ns=(2,), steps=2,
                      recompute="layers", share_buffers=True)
sys.exit(failures)
