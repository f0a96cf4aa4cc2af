# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Ordinary models that the other tests do not try, each against PyTorch's
# full-batch step (zoo.check: loss, parameters, optimizer states, two steps,
# N = 3 on a batch of 7: a remainder), with SGD+momentum and AdamW; and what
# is refused, by name at the model's line.

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo
from ga_mlir.torch import CompileError, compile_train_step

B = 7


def run(name, make_model, make_batch, loss_fn,
        optimizers=("sgd", "adamw"), **options):
    return zoo.check(name, make_model, make_batch, loss_fn,
                     optimizers=optimizers, ns=(3,), steps=2, **options)


def labels(gen, classes):
    return torch.randint(0, classes, (B,), generator=gen)


class Attention(nn.Module):
    """nn.MultiheadAttention (batch_first) with a causal boolean mask and a
    key padding mask."""

    def __init__(self, bias):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True, bias=bias)
        self.out = nn.Linear(8, 3)

    def forward(self, x, pad):
        h = self.inp(x)
        t = x.shape[1]
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        y, _ = self.mha(h, h, h, attn_mask=causal, key_padding_mask=pad)
        return self.out(y).mean(1)


def attention_batch(gen):
    pad = torch.zeros(B, 5, dtype=torch.bool)
    pad[:, 4] = torch.rand(B, generator=gen) < 0.5  # never a whole row
    return torch.randn(B, 5, 4, generator=gen), pad, labels(gen, 3)


def attention_loss(model, x, pad, y):
    return F.cross_entropy(model(x, pad), y)


class SequenceFirstAttention(nn.Module):
    """batch_first=False, a float mask, the input [T, B, D] (batch_dims=1),
    the averaged attention weights used in the loss."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(6, 3, bias=False)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        t = x.shape[0]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        y, w = self.mha(x, x, x, attn_mask=mask)
        return self.out(y.mean(0)) + w.mean((1, 2)).unsqueeze(1)


class ConvGroupNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 8, 3, padding=1)
        self.norm = nn.GroupNorm(2, 8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(F.silu(self.norm(self.conv(x))).mean(-1))


class ResidualActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(12, 16)
        self.acts = nn.ModuleList([nn.Tanh(), nn.Sigmoid(), nn.LeakyReLU(0.1),
                                   nn.ELU(), nn.Softplus()])
        self.layers = nn.ModuleList([nn.Linear(16, 16) for _ in self.acts])
        self.out = nn.Linear(16, 5)

    def forward(self, x):
        h = self.inp(x)
        for act, layer in zip(self.acts, self.layers):
            h = h + act(layer(h))
        return self.out(h)


class PlainLayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 16)
        self.norm = nn.LayerNorm(16, elementwise_affine=False)
        self.b = nn.Linear(16, 5)

    def forward(self, x):
        return self.b(F.gelu(self.norm(self.a(x))))


class MaskedMeanEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 6, padding_idx=0)
        self.fc = nn.Linear(6, 3)

    def forward(self, ids):
        mask = (ids != 0).float().unsqueeze(-1)
        pooled = (self.emb(ids) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.fc(pooled)


def ids_batch(gen):
    ids = torch.randint(0, 11, (B, 6), generator=gen)
    ids[:, -2:] = 0
    return ids, labels(gen, 3)


class Recurrent(nn.Module):
    def __init__(self, cell, **kwargs):
        super().__init__()
        self.rnn = cell(4, 6, batch_first=True, **kwargs)
        width = (kwargs.get("proj_size") or 6) * (
            2 if kwargs.get("bidirectional") else 1)
        self.fc = nn.Linear(width, 3)

    def forward(self, x):
        return self.fc(self.rnn(x)[0][:, -1])  # recurrent call


def sequence_batch(gen):
    return torch.randn(B, 5, 4, generator=gen), labels(gen, 3)


class Regression(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


def regression_batch(gen):
    return (torch.randn(B, 12, generator=gen), torch.randn(B, 4, generator=gen),
            torch.rand(B, 4, generator=gen))


def four_losses(model, x, t, p):
    o = model(x)
    return (F.binary_cross_entropy_with_logits(o, p) + F.mse_loss(o, t) +
            F.smooth_l1_loss(o, t, beta=0.5) +
            F.kl_div(F.log_softmax(o, -1), F.softmax(t, -1),
                     reduction="batchmean"))


def mse(model, x, t, p):
    return F.mse_loss(model(x), t)


def groups_sgd(m):
    return torch.optim.SGD(
        [{"params": m.a.parameters(), "lr": 0.05, "weight_decay": 1e-2},
         {"params": m.b.parameters(), "lr": 0.02, "weight_decay": 0.0}],
        lr=0.1, momentum=0.9)


def groups_adamw(m):
    return torch.optim.AdamW(
        [{"params": m.a.parameters(), "lr": 3e-3, "weight_decay": 0.1},
         {"params": m.b.parameters(), "lr": 1e-3, "weight_decay": 0.0}],
        lr=1e-2)


def partly_frozen():
    model = zoo.MLP()
    model.net[0].weight.requires_grad_(False)
    return model


class TimeMajor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):  # [T, B, 4]
        return self.fc(torch.relu(x).mean(0))


class MaskedDropout(zoo.MLP):
    def forward(self, x, keep):
        return self.net(x * keep / 0.5)  # dropout with the mask as an input


def dropout_batch(gen):
    x, y = zoo.mlp_batch(gen, B)
    return x, (torch.rand(B, 12, generator=gen) < 0.5).float(), y


def dropout_loss(model, x, keep, y):
    return F.cross_entropy(model(x, keep), y)


def small_batch(gen):
    return zoo.mlp_batch(gen, B)


failures = 0
# With a bias on the input projection, the key bias's gradient is zero up to
# rounding (softmax ignores a shift), which AdamW scales up to steps of size
# lr in PyTorch and here alike: SGD only.
# CHECK: mha-bias sgd N=3: {{.*}} OK
failures += run("mha-bias", lambda: Attention(True), attention_batch,
                attention_loss, optimizers=("sgd",))
# CHECK: mha sgd N=3: {{.*}} OK
# CHECK: mha adamw N=3: {{.*}} OK
failures += run("mha", lambda: Attention(False), attention_batch,
                attention_loss)
# CHECK: mha-seq-first sgd N=3: {{.*}} OK
# CHECK: mha-seq-first adamw N=3: {{.*}} OK
failures += run("mha-seq-first", SequenceFirstAttention,
                lambda g: (torch.randn(5, B, 6, generator=g), labels(g, 3)),
                zoo.classification_loss, batch_dims=(1, 0))
# CHECK: conv1d-groupnorm-silu sgd N=3: {{.*}} OK
# CHECK: conv1d-groupnorm-silu adamw N=3: {{.*}} OK
failures += run("conv1d-groupnorm-silu", ConvGroupNorm,
                lambda g: (torch.randn(B, 3, 10, generator=g), labels(g, 4)),
                zoo.classification_loss)
# CHECK: activations sgd N=3: {{.*}} OK
# CHECK: activations adamw N=3: {{.*}} OK
failures += run("activations", ResidualActivations, small_batch,
                zoo.classification_loss)
# CHECK: layernorm-no-affine sgd N=3: {{.*}} OK
# CHECK: layernorm-no-affine adamw N=3: {{.*}} OK
failures += run("layernorm-no-affine", PlainLayerNorm, small_batch,
                zoo.classification_loss)
# CHECK: embedding-padding sgd N=3: {{.*}} OK
# CHECK: embedding-padding adamw N=3: {{.*}} OK
failures += run("embedding-padding", MaskedMeanEmbedding, ids_batch,
                zoo.classification_loss)
# CHECK: gru sgd N=3: {{.*}} OK
# CHECK: gru adamw N=3: {{.*}} OK
failures += run("gru", lambda: Recurrent(nn.GRU), sequence_batch,
                zoo.classification_loss)
# CHECK: lstm-2-layers-bidirectional sgd N=3: {{.*}} OK
failures += run("lstm-2-layers-bidirectional",
                lambda: Recurrent(nn.LSTM, num_layers=2, bidirectional=True),
                sequence_batch, zoo.classification_loss, optimizers=("sgd",))
# CHECK: rnn-relu adamw N=3: {{.*}} OK
failures += run("rnn-relu", lambda: Recurrent(nn.RNN, nonlinearity="relu"),
                sequence_batch, zoo.classification_loss,
                optimizers=("adamw",))
# CHECK: losses sgd N=3: {{.*}} OK
# CHECK: losses adamw N=3: {{.*}} OK
failures += run("losses", Regression, regression_batch, four_losses)
# CHECK: param-groups groups_sgd N=3: {{.*}} OK
# CHECK: param-groups groups_adamw N=3: {{.*}} OK
failures += run("param-groups", Regression, regression_batch, mse,
                optimizers=(groups_sgd, groups_adamw))
# CHECK: frozen sgd N=3: {{.*}} OK
# CHECK: frozen adamw N=3: {{.*}} OK
failures += run("frozen", partly_frozen, small_batch,
                zoo.classification_loss)
# CHECK: batch-dims sgd N=3: {{.*}} OK
failures += run("batch-dims", TimeMajor,
                lambda g: (torch.randn(5, B, 4, generator=g), labels(g, 3)),
                zoo.classification_loss, optimizers=("sgd",),
                batch_dims=(1, 0))
# CHECK: dropout-mask adamw N=3: {{.*}} OK
failures += run("dropout-mask", MaskedDropout, dropout_batch, dropout_loss,
                optimizers=("adamw",))

# Not in the first list either: a pre-norm TransformerEncoderLayer (its
# self-attention is a MultiheadAttention), Conv2d + InstanceNorm2d +
# Hardswish + AdaptiveAvgPool2d + PReLU, Mish + F.normalize + cumsum +
# Bilinear, cross-entropy with probability targets made with F.one_hot.


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                batch_first=True,
                                                norm_first=True, bias=False)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(self.layer(self.inp(x)).mean(1))


class InstanceNormCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, stride=2, padding=1)
        self.norm = nn.InstanceNorm2d(4, affine=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.act = nn.PReLU()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.pool(F.hardswish(self.norm(self.conv(x))))
        return self.fc(self.act(h.flatten(1)))


class CumulativeBilinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 8)
        self.b = nn.Bilinear(8, 8, 5)

    def forward(self, x):
        h = F.normalize(F.mish(self.a(x)), dim=-1)
        return self.b(h, torch.cumsum(h, -1))


def soft_targets(model, x, y):
    target = F.softmax(F.one_hot(y, 5).float() + 0.1, -1)
    return F.cross_entropy(model(x), target)


# CHECK: transformer-encoder-layer adamw N=3: {{.*}} OK
failures += run("transformer-encoder-layer", Encoder, sequence_batch,
                zoo.classification_loss, optimizers=("adamw",))
# (A conv bias before InstanceNorm has a zero gradient up to rounding:
# SGD only, see mha-bias.)
# CHECK: instance-norm-cnn sgd N=3: {{.*}} OK
failures += run("instance-norm-cnn", InstanceNormCNN,
                lambda g: (torch.randn(B, 2, 6, 6, generator=g), labels(g, 3)),
                zoo.classification_loss, optimizers=("sgd",))
# CHECK: cumsum-bilinear adamw N=3: {{.*}} OK
failures += run("cumsum-bilinear", CumulativeBilinear, small_batch,
                zoo.classification_loss, optimizers=("adamw",))
# CHECK: soft-targets sgd N=3: {{.*}} OK
failures += run("soft-targets", zoo.MLP, small_batch, soft_targets,
                optimizers=("sgd",))


def line_of(marker):
    with open(__file__) as f:
        return next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))


def refused(name, model, make_batch, marker):
    """The first error line of the refusal, and whether it is located at
    the line of this file that ends with `# marker`."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        compile_train_step(model, zoo.classification_loss, opt,
                           example_inputs=make_batch(torch.Generator()),
                           micro_batches=2)
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        first = next(line for line in str(error).splitlines()
                     if "error" in line)
        print(f"{name}: refused: {first}")
        print(f"{name}: located: {f'{__file__}:{line_of(marker)}:' in first}")


# CHECK: lstm-proj: refused: {{.*}}: error: LSTM(proj_size > 0) is not supported
# CHECK: lstm-proj: located: True
refused("lstm-proj", Recurrent(nn.LSTM, proj_size=2), sequence_batch,
        "recurrent call")


class SequenceDropout(Recurrent):
    def forward(self, x):
        return self.fc(self.rnn(x)[0][:, -1])  # dropout between layers


# Dropout is drawn by sample (torch-dropout.py checks it against PyTorch).
# CHECK: gru-dropout: ACCEPTED
refused("gru-dropout", SequenceDropout(nn.GRU, num_layers=2, dropout=0.2),
        sequence_batch, "dropout between layers")


class AttentionDropout(Attention):
    def forward(self, x):
        y, _ = self.mha(x, x, x)  # attention dropout
        return self.out(y).mean(1)


def attention_dropout():
    model = AttentionDropout(False)
    model.mha = nn.MultiheadAttention(8, 2, batch_first=True, dropout=0.1)
    return model


# CHECK: mha-dropout: ACCEPTED
refused("mha-dropout", attention_dropout(),
        lambda g: (torch.randn(B, 5, 8, generator=g), labels(g, 3)),
        "attention dropout")


class DataDependent(zoo.MLP):
    def forward(self, x):
        if (x > 3).any():  # data-dependent branch
            x = x / 2
        return self.net(x)


# CHECK: data-dependent: refused: {{.*}}: error: PyTorch could not trace the step: this line reads the value of a tensor in Python {{.*}}(RuntimeError: {{.*}}data-dependent control flow
# CHECK: data-dependent: located: True
refused("data-dependent", DataDependent(), small_batch,
        "data-dependent branch")
sys.exit(failures)
