# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Per-sample indexing (_gathers): each sample's row read at a position
# computed from that sample, x[torch.arange(B), idx], and its backward (an
# index_put with accumulation); torch.gather and index_select within a
# sample and their backward (scatter_add, index_add). Against PyTorch's
# full-batch step (zoo.check: loss, parameters, optimizer states), N = 1
# and N = 4 on a batch of 7 (micro-batches of 2, 2, 2 and 1: a remainder):
# transformers' GPT2ForSequenceClassification and
# Qwen3ForSequenceClassification with right padding (the logits of each
# sample's last token that is not padding: the reward model's shape),
# DeBERTa-v2's token classification (its relative attention gathers along
# the positions) with labels -100 and its own loss, and small models with
# CLIP's pooling (`h[arange(B), ids.argmax(-1)]`) and the other forms. An
# index that reads another sample stays refused at its line.

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import model_zoo
import zoo
from ga_mlir.torch import CompileError, compile_train_step

model_zoo.quiet()
B, T, D, VOCAB = 7, 6, 8, 11


def run(name, make_model, make_batch, loss_fn, optimizers=("sgd",)):
    return zoo.check(name, make_model, make_batch, loss_fn,
                     optimizers=optimizers, ns=(1, 4), steps=2)


def text_classes(gen):
    return model_zoo.text_classes(gen, B)


def gpt2_classifier():
    return model_zoo._hf(
        "GPT2Config", "GPT2ForSequenceClassification", vocab_size=32,
        n_positions=16, n_embd=32, n_layer=2, n_head=2, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, pad_token_id=0, num_labels=3)


def qwen3_classifier():
    return model_zoo._hf(
        "Qwen3Config", "Qwen3ForSequenceClassification", vocab_size=32,
        hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        max_position_embeddings=16, pad_token_id=0, num_labels=3)


def deberta_tokens():
    return model_zoo._hf(
        "DebertaV2Config", "DebertaV2ForTokenClassification", vocab_size=32,
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=16,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        relative_attention=True, position_buckets=4,
        pos_att_type=["p2c", "c2p"], pad_token_id=0, num_labels=3)


def token_labels(gen):
    ids, mask, labels = model_zoo.padded_text(gen, B)
    classes = torch.randint(0, 3, labels.shape, generator=gen)
    return ids, mask, classes.masked_fill(labels == -100, -100)


class Pooling(nn.Module):
    """Embeddings, a layer, then the per-sample reads by index (all of
    them, summed: one compilation), or one that reads another sample."""

    def __init__(self, cross_sample=False):
        super().__init__()
        self.cross_sample = cross_sample
        self.emb = nn.Embedding(VOCAB, D)
        self.lin = nn.Linear(D, D)
        self.out = nn.Linear(D, 3)

    def forward(self, ids, pos):
        h = torch.tanh(self.lin(self.emb(ids)))  # [B, T, D]
        if self.cross_sample:  # another sample's first row
            return self.out(h[pos[:, 0] % h.shape[0], 0])  # another sample
        b = torch.arange(h.shape[0])
        # CLIP's pooling: the state at the end token.
        p = h[b, ids.argmax(-1)]
        # 3 positions per sample, repeated ones, negative ones.
        p = p + h[b[:, None], pos - T].mean(1)
        # A slice before the indices.
        p = p + h.transpose(1, 2)[b, :, pos[:, 0]]
        # A write: x[arange(B), idx] = v.
        g = h.clone()
        g[b, pos[:, 0]] = self.out.weight[0, 0] * h[:, 0]
        p = p + g.mean(1)
        p = p + torch.gather(h, 1, pos.unsqueeze(-1).expand(-1, -1, D)).mean(1)
        p = p + h.index_select(1, torch.tensor([3, 1, 3])).sum(1)
        return self.out(p)


def pooling_batch(gen):
    return (torch.randint(0, VOCAB, (B, T), generator=gen),
            torch.randint(0, T, (B, 3), generator=gen),
            torch.randint(0, 3, (B,), generator=gen))


def pooling_loss(model, ids, pos, y):
    return F.cross_entropy(model(ids, pos), y)


def write(x, index, values):
    y = x.clone()
    y[index] = values
    return y


# The rewrite alone (_gathers), on index layouts the models do not all
# have, against PyTorch's indexing on the same values (bit for bit): the
# iota among the indices, broadcast against 1 or 2 others, before or after
# a slice (the result's broadcast dimensions in front), negative indices,
# reads, writes, writes with accumulation (repeated positions summed).
LAYOUTS = {
    "adjacent": lambda x, i, j, v: x[torch.arange(x.shape[0]), i],
    "two-general": lambda x, i, j, v:
        x[torch.arange(x.shape[0])[:, None], i[:, None], j],
    "non-adjacent": lambda x, i, j, v: x[torch.arange(x.shape[0]), :, j[:, 0]],
    "iota-second": lambda x, i, j, v:
        x.transpose(0, 1)[i, torch.arange(x.shape[0])],
    "accumulate": lambda x, i, j, v: x.index_put(
        (torch.arange(x.shape[0])[:, None], i[:, None], j), v,
        accumulate=True),
    "write": lambda x, i, j, v: write(
        x, (torch.arange(x.shape[0]), i), v[:, :1, :1].expand(-1, 4, 2)),
    "write-non-adjacent": lambda x, i, j, v: write(
        x, (torch.arange(x.shape[0]), slice(None), j[:, 0]),
        v[:, :1].expand(-1, 5, -1)),
}


def check_layouts():
    from torch.fx.experimental.proxy_tensor import make_fx
    from ga_mlir.torch._gathers import rewrite_per_sample_indexing
    gen = torch.Generator().manual_seed(0)
    args = (torch.randn(3, 5, 4, 2, generator=gen),
            torch.randint(-5, 5, (3,), generator=gen),
            torch.randint(0, 4, (3, 2), generator=gen),
            torch.randn(3, 2, 2, generator=gen))
    indexing = (torch.ops.aten.index.Tensor, torch.ops.aten.index_put.default,
                torch.ops.aten.index_put_.default)
    for name, fn in LAYOUTS.items():
        # Functionalized, as the step is traced: writes are index_put.
        gm = make_fx(torch.func.functionalize(fn))(*args)
        rewrite_per_sample_indexing(gm)
        left = sum(n.target in indexing for n in gm.graph.nodes)
        print(f"layout {name}: indexing left {left}, exact "
              f"{torch.equal(gm(*args), fn(*args))}")


# CHECK: layout adjacent: indexing left 0, exact True
# CHECK: layout two-general: indexing left 0, exact True
# CHECK: layout non-adjacent: indexing left 0, exact True
# CHECK: layout iota-second: indexing left 0, exact True
# CHECK: layout accumulate: indexing left 0, exact True
# CHECK: layout write: indexing left 0, exact True
# CHECK: layout write-non-adjacent: indexing left 0, exact True
check_layouts()
failures = 0
# CHECK: gpt2-classifier sgd N=1: {{.*}} OK
# CHECK: gpt2-classifier sgd N=4: {{.*}} OK
failures += run("gpt2-classifier", gpt2_classifier, text_classes,
                model_zoo.hf_loss)
# CHECK: qwen3-classifier sgd N=1: {{.*}} OK
# CHECK: qwen3-classifier sgd N=4: {{.*}} OK
failures += run("qwen3-classifier", qwen3_classifier, text_classes,
                model_zoo.hf_loss)
# CHECK: deberta-v2-tokens sgd N=1: {{.*}} OK
# CHECK: deberta-v2-tokens sgd N=4: {{.*}} OK
failures += run("deberta-v2-tokens", deberta_tokens, token_labels,
                model_zoo.hf_loss)
# CHECK: pooling adamw N=1: {{.*}} OK
# CHECK: pooling adamw N=4: {{.*}} OK
failures += run("pooling", Pooling, pooling_batch, pooling_loss,
                optimizers=("adamw",))


def line_of(marker):
    with open(__file__) as f:
        return next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))


# (The backward's write by index is a one-hot product now (_rearrange), so
# ga-mlir finds the forward's read of another sample first.)
# CHECK: cross-sample: refused: {{.*}}torch-zoo-gathers.py:{{[0-9]+}}: error: {{.*(a write by index|reads a per-sample tensor by index)}}
# CHECK: cross-sample: located: True
model = Pooling(cross_sample=True)
try:
    compile_train_step(model, pooling_loss,
                       torch.optim.SGD(model.parameters(), lr=0.1),
                       example_inputs=pooling_batch(torch.Generator()),
                       micro_batches=2)
    print("cross-sample: ACCEPTED")
except CompileError as error:
    first = next(line for line in str(error).splitlines()
                 if "error:" in line)
    print(f"cross-sample: refused: {first}")
    where = f"{__file__}:{line_of('another sample')}:"
    print(f"cross-sample: located: {where in first}")
sys.exit(failures)
