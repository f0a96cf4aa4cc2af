# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# nn.RNN/GRU/LSTM as time loops (ga_mlir/torch/_recurrence.py, _rolled.py).
#
# 1. The loop's arithmetic against PyTorch's own kernels in float64 (an
#    oracle that shares no code with ours): the loss and every gradient of
#    _modules' batch-first form equal nn.LSTM/GRU/RNN's to 1e-12, for
#    layers, directions, batch_first=False, given initial states, no bias,
#    unbatched input.
# 2. The imported step holds one scf.for per layer, direction and pass
#    (forward and backward), and its size does not depend on the number of
#    time steps: 4 and 24 steps give the same ops.
# 3. Compiled steps against PyTorch's (model_zoo.compare: SGD within 1e-4 of
#    PyTorch's float32 step) for the forms the zoo does not train.
# 4. Forms and readings of the state with a remainder batch (B = 7: micro-
#    batches of unequal sizes), SGD and AdamW (model_zoo.verdict).
# 5. The memory report follows the loops (their carried states bufferize in
#    place, --ga-reuse-replaced-buffers): max_memory chooses N for a 2-layer
#    LSTM, and the step's loss is PyTorch's.

import copy
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import model_zoo
from ga_mlir.torch import _export, _modules, compile_train_step

model_zoo.quiet()
torch.manual_seed(0)


class Tagger(nn.Module):
    """A recurrent layer whose every output step is classified."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn
        self.fc = nn.Linear(rnn.hidden_size * (2 if rnn.bidirectional else 1),
                            3)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])


FORMS = [
    ("lstm-2-layers-bidirectional-seq-first",
     lambda: nn.LSTM(3, 5, num_layers=2, bidirectional=True)),
    ("gru-batch-first-no-bias",
     lambda: nn.GRU(3, 5, batch_first=True, bias=False)),
    ("rnn-tanh-3-layers", lambda: nn.RNN(3, 5, num_layers=3)),
    ("rnn-relu-bidirectional",
     lambda: nn.RNN(3, 5, nonlinearity="relu", bidirectional=True)),
]


def oracle_distance(make):
    m = make().double()
    lstm = isinstance(m, nn.LSTM)
    x = torch.randn(7, 4, 3, dtype=torch.float64)
    layers = m.num_layers * (2 if m.bidirectional else 1)
    h0 = torch.randn(layers, 4, 5,
                     dtype=torch.float64)
    if m.batch_first:
        x = x.transpose(0, 1).contiguous()
    state = (h0, torch.randn_like(h0)) if lstm else h0
    worst = 0.0
    unbatched = x[0] if m.batch_first else x[:, 0]
    for args in ((x,), (x, state), (unbatched,)):
        outs = []
        for f in (m, lambda *a: _modules._recurrent_forward(m, *a)):
            out, last = f(*args)
            last = last if not lstm else last[0] * 2 + last[1]
            loss = (out.sin()).sum() + (last.cos()).sum()
            grads = torch.autograd.grad(loss, list(m.parameters()))
            outs.append((loss.detach(), grads))
        (l1, g1), (l2, g2) = outs
        worst = max([worst, float((l1 - l2).abs())] +
                    [float((a - b).abs().max()) for a, b in zip(g1, g2)])
    return worst


# CHECK: oracle lstm-2-layers-bidirectional-seq-first: OK
# CHECK: oracle gru-batch-first-no-bias: OK
# CHECK: oracle rnn-tanh-3-layers: OK
# CHECK: oracle rnn-relu-bidirectional: OK
failures = 0
for name, make in FORMS:
    d = oracle_distance(make)
    ok = d < 1e-12
    failures += not ok
    print(f"oracle {name}: {'OK' if ok else f'FAIL {d:.3g}'}")


def exported(make, steps):
    torch.manual_seed(0)
    model = Tagger(make())
    x = torch.randn(steps, 6, 3) if not model.rnn.batch_first else \
        torch.randn(6, steps, 3)
    y = torch.randint(0, 3, (6,))

    def loss_fn(m, x, y):
        logits = m(x)
        last = logits[-1] if not m.rnn.batch_first else logits[:, -1]
        return F.cross_entropy(last, y)
    text, _ = _export.export_train_step(
        model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.1),
        (x, y), batch_dims=[0 if model.rnn.batch_first else 1, 0])
    ops = re.findall(r"= ([a-z_]+\.[a-z_.]+)", text)
    return ops, text.count("scf.for")


# CHECK: loops lstm-2-layers-bidirectional-seq-first: 8 scf.for, same ops for 4 and 24 steps
# CHECK: loops gru-batch-first-no-bias: 2 scf.for, same ops for 4 and 24 steps
# CHECK: loops rnn-tanh-3-layers: 6 scf.for, same ops for 4 and 24 steps
# CHECK: loops rnn-relu-bidirectional: 4 scf.for, same ops for 4 and 24 steps
for name, make in FORMS:
    (short, loops), (long, loops_long) = exported(make, 4), exported(make,
                                                                     24)
    same = sorted(short) == sorted(long) and loops == loops_long
    failures += not same
    print(f"loops {name}: {loops} scf.for, "
          + ("same ops for 4 and 24 steps" if same else
             f"FAIL: {len(short)} ops for 4 steps, {len(long)} for 24"))


class SequenceFirst(nn.Module):
    """An LSTM over [T, B, D] with the initial states as inputs."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 6, num_layers=2)
        self.fc = nn.Linear(6, 3)

    def forward(self, x, h0, c0):
        out, _ = self.rnn(x, (h0, c0))
        return self.fc(out.mean(0))


def sequence_first_batch(gen, b):
    return (torch.randn(5, b, 4, generator=gen),
            torch.randn(2, b, 6, generator=gen),
            torch.randn(2, b, 6, generator=gen),
            torch.randint(0, 3, (b,), generator=gen))


def sequence_first_loss(model, x, h0, c0, y):
    return F.cross_entropy(model(x, h0, c0), y)


class NoBiasGRU(nn.Module):
    """A bidirectional GRU without biases whose outputs are weighed by a
    tensor attribute (a constant of the trace, in the segment after the
    loops)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 6, batch_first=True, bias=False,
                          bidirectional=True)
        self.fc = nn.Linear(12, 3)
        self.weights = torch.linspace(0.5, 1.5, 12)

    def forward(self, x):
        out, h_n = self.rnn(x)
        return self.fc(out[:, 0] * self.weights + h_n.sum(0).repeat(1, 2))


# CHECK: lstm-sequence-first-states sgd N=3: {{.*}} OK
# CHECK: gru-no-bias-bidirectional sgd N=2: {{.*}} OK
for label, case, n in (
        ("lstm-sequence-first-states",
         model_zoo.Case(SequenceFirst, sequence_first_batch,
                        sequence_first_loss, batch_dims=[1, 1, 1, 0]), 3),
        ("gru-no-bias-bidirectional",
         model_zoo.Case(NoBiasGRU, model_zoo.sequences,
                        model_zoo.classification), 2)):
    r = model_zoo.compare(case, "sgd", n)
    ok = model_zoo.verdict("sgd", r)
    failures += not ok
    print(f"{label} sgd N={n}: vs PyTorch {r['vs_pytorch']:.2g} "
          f"{'OK' if ok else 'FAIL'}")


class Reader(nn.Module):
    """A recurrent layer whose last output, mean output or last layer's
    state is classified."""

    def __init__(self, rnn, read):
        super().__init__()
        self.rnn, self.read = rnn, read
        self.fc = nn.Linear(rnn.hidden_size * (2 if rnn.bidirectional else 1),
                            3)

    def forward(self, x):
        out, state = self.rnn(x)
        if self.read == "last":
            return self.fc(out[:, -1])
        if self.read == "mean":
            return self.fc(out.mean(1))
        h = state[0] if isinstance(state, tuple) else state
        return self.fc(torch.cat([h[-1]] * (2 if self.rnn.bidirectional
                                            else 1), -1))


def steps_of(t, features):
    def make(gen, b):
        return (torch.randn(b, t, features, generator=gen),
                torch.randint(0, 3, (b,), generator=gen))
    return make


# CHECK: lstm-3-layers-last adamw N=5: OK
# CHECK: gru-3-layers-one-step adamw N=3: OK
# CHECK: rnn-relu-bidirectional-no-bias-last sgd N=2: OK
# CHECK: lstm-bidirectional-state adamw N=2: OK
for label, make, (t, features), optimizer, n in (
        ("lstm-3-layers-last",
         lambda: Reader(nn.LSTM(8, 5, num_layers=3, batch_first=True),
                        "last"), (9, 8), "adamw", 5),
        ("gru-3-layers-one-step",
         lambda: Reader(nn.GRU(3, 16, num_layers=3, batch_first=True),
                        "mean"), (1, 3), "adamw", 3),
        ("rnn-relu-bidirectional-no-bias-last",
         lambda: Reader(nn.RNN(3, 5, num_layers=3, nonlinearity="relu",
                               bidirectional=True, bias=False,
                               batch_first=True), "last"), (3, 3), "sgd", 2),
        ("lstm-bidirectional-state",
         lambda: Reader(nn.LSTM(3, 5, num_layers=2, bidirectional=True,
                                batch_first=True), "state"), (9, 3), "adamw",
         2)):
    r = model_zoo.compare(model_zoo.Case(make, steps_of(t, features),
                                         model_zoo.classification),
                          optimizer, n, batch=7)
    ok = model_zoo.verdict(optimizer, r)
    failures += not ok
    print(f"{label} {optimizer} N={n}: "
          f"{'OK' if ok else 'FAIL ' + str(r)}")

# CHECK: max_memory: N = {{[0-9]+}}, loss as PyTorch's: OK
torch.manual_seed(0)
model = Tagger(nn.LSTM(4, 6, num_layers=2, batch_first=True))
reference = copy.deepcopy(model)
x, y = torch.randn(12, 5, 4), torch.randint(0, 3, (12,))


def last_step_loss(m, x, y):
    return F.cross_entropy(m(x)[:, -1], y)


step = compile_train_step(model, last_step_loss,
                          torch.optim.SGD(model.parameters(), lr=0.1),
                          example_inputs=(x, y), max_memory="40KiB")
loss = float(step(x, y))
with torch.no_grad():
    expected = float(last_step_loss(reference, x, y))
n = step.chosen_micro_batches(x, y)
ok = abs(loss - expected) < 1e-5 and n > 1
failures += not ok
print(f"max_memory: N = {n}, loss as PyTorch's: "
      f"{'OK' if ok else f'FAIL {loss} vs {expected}'}")
sys.exit(failures)
