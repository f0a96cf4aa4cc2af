# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Dropout in training mode, exact under accumulation: the compiled step
# draws its masks from Philox 4x32-10 keyed by the seed (drawn from torch's
# default generator at each call), the draw, the sample's index in the whole
# batch and the element, so that N = 1, 4 (a remainder: 10 = 3 + 3 + 2 + 2)
# and 5 micro-batches train the same weights; PyTorch's own step with the
# same masks (computed independently: numpy uint64 arithmetic, in
# model_zoo.philox_np) agrees; another seed gives other masks. PyTorch's
# own dropout under gradient accumulation is not reproducible across N
# (shown at the end). Tensor.exponential_ draws -log(1 - u) / lambd of the
# same uniform numbers (checked the same way: a Gumbel router); torch.randn_like
# and torch.randint (a diffusion model's noise and step) take Box-Muller
# of two words and the word modulo the range.

import copy
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import model_zoo
from ga_mlir.torch import compile_train_step

B = 10


class DropoutNet(nn.Module):
    """Dropout on [B, T, D] (nn.Dropout, in place) and on [B, D]
    (F.dropout)."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.3, inplace=True)
        self.mid = nn.Linear(8, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h = self.mid(torch.tanh(self.drop(self.inp(x))))
        return self.out(F.dropout(h.mean(1), p=0.5, training=self.training))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def batches():
    gen = torch.Generator().manual_seed(3)
    return [(torch.randn(B, 5, 4, generator=gen),
             torch.randint(0, 3, (B,), generator=gen)) for _ in range(2)]


def train(n, seed, make=DropoutNet, data=None, loss=loss_fn):
    """Two compiled steps in n micro-batches after torch.manual_seed(seed);
    the parameters and losses."""
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = data or batches()
    step = compile_train_step(model, loss, opt, example_inputs=data[0],
                              micro_batches=n)
    torch.manual_seed(seed)
    losses = [step(*batch) for batch in data]
    return [p.detach().clone() for p in model.parameters()], losses


def reference(seed, make=DropoutNet, data=None, loss_of=loss_fn):
    """PyTorch's full-batch step with the compiled step's masks."""
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    torch.manual_seed(seed)
    losses = []
    for batch in data or batches():
        draw = model_zoo.next_seed()
        torch.randint(2 ** 63 - 1, (), dtype=torch.int64)  # as the step
        with model_zoo.ReferenceDropout(draw):
            loss = loss_of(model, *batch)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.detach())
    return [p.detach().clone() for p in model.parameters()], losses


def distance(a, b):
    return max((x - y).abs().max().item() for x, y in zip(a[0] + a[1],
                                                          b[0] + b[1]))


# The generator: Random123's known-answer vectors of Philox 4x32-10 (first
# output word), from the traced torch form and from numpy.
from ga_mlir.torch._philox import philox  # noqa: E402
for counter, key, expected in [
        ((0, 0, 0, 0), (0, 0), 0x6627E8D5),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, 0x408F276D),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
         (0xA4093822, 0x299F31D0), 0xD16CFE09)]:
    traced = int(philox(tuple(torch.tensor(c) for c in counter),
                        tuple(torch.tensor(k) for k in key)))
    numpy = int(model_zoo.philox_np(*counter, *key))
    # CHECK-COUNT-3: philox known answer: True True
    print("philox known answer:", traced == expected, numpy == expected)

failures = 0
runs = {n: train(n, seed=7) for n in (1, 4, 5)}
ref = reference(seed=7)
for n in (1, 4, 5):
    d_n = distance(runs[n], runs[1])
    d_ref = distance(runs[n], ref)
    ok = d_n <= 1e-5 and d_ref <= 1e-5
    failures += not ok
    # CHECK: N=1 seed 7: vs N=1 {{.*}} vs PyTorch with the same masks {{.*}} OK
    # CHECK: N=4 seed 7: vs N=1 {{.*}} vs PyTorch with the same masks {{.*}} OK
    # CHECK: N=5 seed 7: vs N=1 {{.*}} vs PyTorch with the same masks {{.*}} OK
    print(f"N={n} seed 7: vs N=1 {d_n:.2g} vs PyTorch with the same masks "
          f"{d_ref:.2g} {'OK' if ok else 'FAIL'}")

# Another seed: other masks, other weights (by far more than rounding).
other = train(4, seed=8)
# CHECK: seed 8 differs from seed 7: True
print("seed 8 differs from seed 7:", distance(other, runs[4]) > 1e-3)
failures += distance(other, runs[4]) <= 1e-3

# The step draws its seed from torch's default generator and advances it:
# after a call, the generator is where one draw of the seed leaves it.
torch.manual_seed(0)
model = DropoutNet()
step = compile_train_step(model, loss_fn,
                          torch.optim.SGD(model.parameters(), lr=0.1),
                          example_inputs=batches()[0], micro_batches=2)
torch.manual_seed(11)
step(*batches()[0])
after_step = torch.rand(3)
torch.manual_seed(11)
torch.randint(2 ** 63 - 1, (), dtype=torch.int64)
# CHECK: the step advances torch's generator by one seed: True
print("the step advances torch's generator by one seed:",
      torch.equal(after_step, torch.rand(3)))


class Noise(nn.Module):
    """torch.rand_like and torch.bernoulli with a tensor of probabilities,
    in the model."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = x + 0.1 * torch.rand_like(x)
        keep = torch.bernoulli(torch.sigmoid(x).detach())
        return self.fc((x * keep).mean(1))


noise = {n: train(n, seed=5, make=Noise) for n in (1, 3)}
# CHECK: rand_like and bernoulli: N=3 vs N=1 {{.*}} OK
d = distance(noise[3], noise[1])
print(f"rand_like and bernoulli: N=3 vs N=1 {d:.2g}",
      "OK" if d <= 1e-5 else "FAIL")
failures += d > 1e-5


class GumbelRouter(nn.Module):
    """Gumbel noise on a router's logits from Tensor.exponential_ (PhiMoE's
    sparse mixer: -log of an exponential draw), in the model."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 6)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        logits = self.router(x)
        gumbel = -torch.empty_like(logits).exponential_(2.0).log()
        return self.fc(F.softmax(logits + gumbel, -1).mean(1))


class Halved(torch.autograd.Function):
    """x with half its gradient: a model's own autograd.Function, which
    makes the frontend trace the step before functionalizing it (the
    in-place draws are then met as such, before the functional ones)."""

    @staticmethod
    def forward(x):
        return x.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.5


class GumbelRouterFunction(GumbelRouter):
    """GumbelRouter with an autograd.Function on the logits and a later
    rand_like: the draws must keep their order."""

    def forward(self, x):
        logits = Halved.apply(self.router(x))
        gumbel = -torch.empty_like(logits).exponential_(2.0).log()
        h = F.softmax(logits + gumbel, -1) * (
            1 + 0.1 * torch.rand_like(logits[..., :1]))
        return self.fc(h.mean(1))


for name, make in (("exponential_", GumbelRouter),
                   ("exponential_ beside an autograd.Function",
                    GumbelRouterFunction)):
    gumbel = {n: train(n, seed=5, make=make) for n in (1, 4)}
    d_n = distance(gumbel[4], gumbel[1])
    ok = d_n <= 1e-5
    line = f"{name}: N=4 vs N=1 {d_n:.2g}"
    if make is GumbelRouter:
        d_ref = distance(gumbel[4], reference(seed=5, make=make))
        ok = ok and d_ref <= 1e-5
        line += f" vs PyTorch with the same draws {d_ref:.2g}"
    # CHECK: exponential_: N=4 vs N=1 {{.*}} vs PyTorch with the same draws {{.*}} OK
    # CHECK: exponential_ beside an autograd.Function: N=4 vs N=1 {{.*}} OK
    print(line, "OK" if ok else "FAIL")
    failures += not ok


class Denoiser(nn.Module):
    """A diffusion model's training step: Gaussian noise (torch.randn_like)
    at a random step of a schedule (torch.randint) per sample, the model
    predicting the noise."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 4))
        self.register_buffer("scale", torch.linspace(0.1, 1.0, 10))

    def forward(self, x):
        noise = torch.randn_like(x)
        t = torch.randint(0, 10, (x.shape[0],))
        s = self.scale[t].view(-1, 1, 1)
        noisy = (1 - s) * x + s * noise
        guess = self.net(torch.cat([noisy, s.expand(-1, x.shape[1], 1)],
                                   -1))
        return (guess - noise).square().mean((1, 2))


def denoise_loss(model, x, y):
    return model(x).mean()


diffusion = {n: train(n, seed=5, make=Denoiser, loss=denoise_loss)
             for n in (1, 4)}
d_n = distance(diffusion[4], diffusion[1])
d_ref = distance(diffusion[4], reference(seed=5, make=Denoiser,
                                         loss_of=denoise_loss))
ok = d_n <= 1e-5 and d_ref <= 1e-5
# CHECK: randn_like and randint: N=4 vs N=1 {{.*}} vs PyTorch with the same draws {{.*}} OK
print(f"randn_like and randint: N=4 vs N=1 {d_n:.2g} vs PyTorch with the "
      f"same draws {d_ref:.2g}", "OK" if ok else "FAIL")
failures += not ok
# The oracle's normal numbers are standard normal (one draw of 10^6).
z = model_zoo.normal_draw(123, 0, (1000, 1000))
# CHECK: normal draw: mean {{.*}} std {{.*}} OK
print(f"normal draw: mean {z.mean():.4f} std {z.std():.4f}",
      "OK" if abs(z.mean()) < 5e-3 and abs(z.std() - 1) < 5e-3 else "FAIL")


class StackedGRU(nn.Module):
    """nn.GRU's dropout between layers (PyTorch draws it inside its kernel:
    no reference with the same masks, N-invariance only)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 6, num_layers=2, dropout=0.4, batch_first=True)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(self.rnn(x)[0][:, -1])


class AttentionDropout(nn.Module):
    """nn.MultiheadAttention's dropout of its weights (the same)."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.mha = nn.MultiheadAttention(8, 2, dropout=0.2, batch_first=True,
                                         bias=False)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h = self.inp(x)
        return self.out(self.mha(h, h, h)[0].mean(1))


for name, make in (("GRU dropout between layers", StackedGRU),
                   ("MultiheadAttention dropout", AttentionDropout)):
    runs_n = {n: train(n, seed=5, make=make) for n in (1, 4)}
    d = distance(runs_n[4], runs_n[1])
    # CHECK: GRU dropout between layers: N=4 vs N=1 {{.*}} OK
    # CHECK: MultiheadAttention dropout: N=4 vs N=1 {{.*}} OK
    print(f"{name}: N=4 vs N=1 {d:.2g}", "OK" if d <= 1e-5 else "FAIL")
    failures += d > 1e-5


class HostDraws(nn.Module):
    """A mask drawn with numpy's or Python's generator in the forward (as
    Wav2Vec2's SpecAugment does with np.random): a trace would keep the
    numbers as constants, the same mask at every call. Refused at the line
    that draws; the generators' states are left as they were."""

    def __init__(self, draw):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.draw = draw

    def forward(self, x):
        keep = torch.as_tensor(self.draw(x.shape)) > 0.3  # the draw's line
        return self.fc(torch.where(keep, x, 0.0).mean(1))


import random  # noqa: E402
from ga_mlir.torch import CompileError  # noqa: E402

for name, draw in (("numpy.random", lambda shape: np.random.rand(*shape)),
                   ("random", lambda shape: [[[random.random()] * shape[2]] *
                                             shape[1]] * shape[0])):
    states = np.random.get_state()[1].copy(), random.getstate()
    torch.manual_seed(0)
    model = HostDraws(draw)
    try:
        compile_train_step(model, loss_fn,
                           torch.optim.SGD(model.parameters(), lr=0.1),
                           example_inputs=batches()[0], micro_batches=2)
        print(f"{name}: compiled")
    except CompileError as error:
        line = str(error).splitlines()[0]
        where = line.split(": error:")[0].rsplit("/", 1)[-1]
        print(f"{name}: refused at {where} [{error.code}]:",
              line.split("random numbers with ")[1].split(",")[0],
              "states kept:",
              bool((np.random.get_state()[1] == states[0]).all()) and
              random.getstate() == states[1])
# CHECK: numpy.random: refused at torch-dropout.py:{{[0-9]+}} [random-draw-unsupported]: numpy.random.rand states kept: True
# CHECK: random: refused at torch-dropout.py:{{[0-9]+}} [random-draw-unsupported]: random.random states kept: True


# A forward that seeds the generator with a number before it draws
# (BigBird's random blocks: np.random.seed(layer) in training) draws the same
# numbers at every call: constants of the trace are exact. Compiled, and
# its two steps match PyTorch's; a draw before the seed, or a seed of None
# (from the system's entropy), is still refused at its line.
def seeded(shape):
    np.random.seed(3)
    return np.random.rand(*shape)


def drawn_before_seed(shape):
    np.random.rand()  # a draw before the seed
    return seeded(shape)


def seeded_by_entropy(shape):
    np.random.seed(None)  # entropy
    return np.random.rand(*shape)


def compiled_or_refused(name, draw):
    """Where compile_train_step refuses HostDraws(draw), or its distance
    from PyTorch's steps; the number of failures."""
    torch.manual_seed(0)
    model = HostDraws(draw)
    ref = copy.deepcopy(model)
    try:
        step = compile_train_step(model, loss_fn,
                                  torch.optim.SGD(model.parameters(), lr=0.1),
                                  example_inputs=batches()[0],
                                  micro_batches=2)
    except CompileError as error:
        line = str(error).splitlines()[0]
        print(f"{name}: refused at",
              line.split(": error:")[0].rsplit("/", 1)[-1],
              line.split("random numbers with ")[1].split(" (")[0].split(
                  ",")[0])
        return 0
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for x, y in batches()[:2]:
        step(x, y)
        loss_fn(ref, x, y).backward()
        ref_opt.step()
        ref_opt.zero_grad()
    d = max((p - q).abs().max().item()
            for p, q in zip(model.parameters(), ref.parameters()))
    print(f"{name}: compiled, 2 steps vs PyTorch {d:.2g}",
          "OK" if d <= 1e-6 else "FAIL")
    return d > 1e-6


# A generator of the model's own (np.random.default_rng(), RandomState,
# random.Random) is not the global one: its draws were frozen silently; now
# refused at the drawing line, seeded or not.
held = (np.random.default_rng(0), np.random.RandomState(0), random.Random(0))
for name, draw in (("seeded", seeded), ("drawn before seed", drawn_before_seed),
                   ("seeded by entropy", seeded_by_entropy),
                   ("default_rng", lambda shape: held[0].random(shape)),
                   ("RandomState", lambda shape: held[1].rand(*shape)),
                   ("random.Random", lambda shape: [[[held[2].random()] *
                                                     shape[2]] * shape[1]] *
                    shape[0])):
    failures += compiled_or_refused(name, draw)
# CHECK: seeded: compiled, 2 steps vs PyTorch {{.*}} OK
# CHECK: drawn before seed: refused at torch-dropout.py:{{[0-9]+}} numpy.random.rand
# CHECK: seeded by entropy: refused at torch-dropout.py:{{[0-9]+}} numpy.random.seed
# CHECK: default_rng: refused at torch-dropout.py:{{[0-9]+}} a generator of its own
# CHECK: RandomState: refused at torch-dropout.py:{{[0-9]+}} a generator of its own
# CHECK: random.Random: refused at torch-dropout.py:{{[0-9]+}} a generator of its own

# With random.Random generators alone held, their C methods are watched by
# a profile function, not line by line: a draw through a Python method
# (randint) is refused at the line of the draw (random.py's, a frame outside
# torch and ga_mlir counting as the user's); one that no Python line calls
# (map over the C method) at the end of the forward.
import gc  # noqa: E402

from ga_mlir.torch import _philox  # noqa: E402

del held
gc.collect()
kept = random.Random(0)

# CHECK: held: random.Random alone True
print("held: random.Random alone", all(
    isinstance(g, random.Random) for g, _ in _philox._held_generators()))
for name, draw in (
        ("randint", lambda shape: np.full(shape, kept.randint(0, 1))),
        ("mapped", lambda shape: np.full(shape, sum(map(kept.getrandbits,
                                                        [1]))))):
    failures += compiled_or_refused(name, draw)
# CHECK: randint: refused at {{.*}}.py:{{[0-9]+}} a generator of its own
# CHECK: mapped: refused at the training step (no line of the model) a generator of its own


# PyTorch's own dropout under accumulation: the same seed, the same batch,
# N = 1 and N = 2 micro-batches draw other masks, so the weights differ.
def pytorch_accumulated(n):
    torch.manual_seed(0)
    model = DropoutNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = batches()[0]
    torch.manual_seed(7)
    for xs, ys in zip(x.chunk(n), y.chunk(n)):
        (loss_fn(model, xs, ys) * len(ys) / B).backward()
    opt.step()
    return [p.detach() for p in model.parameters()]


d = max((a - b).abs().max().item() for a, b in
        zip(pytorch_accumulated(1), pytorch_accumulated(2)))
# CHECK: PyTorch's own dropout, N=2 vs N=1 differ: True
print("PyTorch's own dropout, N=2 vs N=1 differ:", d > 1e-3)
sys.exit(failures)
