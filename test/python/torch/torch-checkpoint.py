# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A model that calls torch.utils.checkpoint: the step is traced as the plain
# calls (_checkpoint), and the compiled step chooses what it recomputes. Each
# form against PyTorch's own full-batch step (its checkpoints recomputing in
# the backward), SGD with momentum, two steps, N = 1 and N = 4 of 8 samples:
#   non-reentrant   checkpoint(use_reentrant=False) with a keyword argument,
#                   a checkpoint nested inside; then checkpoint_sequential
#                   in 2 segments, preserve_rng_state=False (no random draw
#                   inside);
#   reentrant       use_reentrant=True on the raw input (needs no gradient:
#                   PyTorch gives the block's parameters no gradient, nor do
#                   we) and on (hidden, mask) with a mask needing none,
#                   returning a tuple whose element is a list (a tensor
#                   in it comes out of PyTorch's checkpoint detached);
#   dropout         Dropout inside a checkpointed block of each form: the
#                   reference is PyTorch's step with the compiled step's
#                   masks (model_zoo.ReferenceDropout) on the model without
#                   checkpoints, and PyTorch's checkpointed step is checked
#                   bitwise equal to its plain one on torch's own masks.
# The traced step of each but `reentrant` is the one of the same model
# without checkpoints, up to locations (export_train_step's IR; not in
# `reentrant`, as in PyTorch); memory_report()["user_checkpoints"] counts
# the calls read as plain ones. Refused at the call: context_fn,
# preserve_rng_state=False around a dropout; the substitution is undone
# after a refusal.

import contextlib
import copy
import re
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as tuc
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

import model_zoo
IMPL, REQUIRES_GRAD = tuc._checkpoint_impl, torch.Tensor.requires_grad_
# PyTorch's reentrant checkpoint around the raw input warns that its
# block gets no gradient: the point of the `reentrant` form.
warnings.filterwarnings("ignore", message="None of the inputs")
from ga_mlir.torch import CompileError, compile_train_step, \
    export_train_step


class Net(nn.Module):
    def __init__(self, form, checkpoints=True):
        super().__init__()
        self.form, self.checkpoints = form, checkpoints
        self.a = nn.Linear(6, 16)
        self.b = nn.Linear(16, 16)
        self.seq = nn.Sequential(nn.Linear(16, 16), nn.Tanh(),
                                 nn.Linear(16, 16), nn.GELU(),
                                 nn.Linear(16, 16), nn.Tanh())
        self.c = nn.Linear(16, 3)
        self.drop = nn.Dropout(0.25)

    def ckpt(self, fn, *args, **kwargs):
        if self.checkpoints:
            return checkpoint(fn, *args, **kwargs)
        kwargs.pop("use_reentrant")
        return fn(*args, **kwargs)

    def inner(self, h):
        return torch.tanh(self.b(h))

    def block(self, h, scale):
        return self.ckpt(self.inner, h, use_reentrant=False) * scale

    def first(self, x):
        return torch.tanh(self.a(x))

    def masked(self, h, mask):
        y = self.b(h)
        return torch.tanh(y) * mask, [y]

    def dropped(self, h):
        return self.drop(torch.tanh(self.b(h)))

    def forward(self, x):
        if self.form == "reentrant":
            h = self.ckpt(self.first, x, use_reentrant=True)
            mask = (x[:, :1] > 0).to(x.dtype)
            out, [y] = self.ckpt(self.masked, self.b(h), mask,
                                 use_reentrant=True)
            return self.c(out + y)
        h = self.a(x)
        if self.form == "non-reentrant":
            h = self.ckpt(self.block, h, use_reentrant=False, scale=2.0)
            h = checkpoint_sequential(self.seq, 2, h, use_reentrant=False,
                                      preserve_rng_state=False) \
                if self.checkpoints else self.seq(h)
        elif self.form == "dropout":
            h = self.ckpt(self.dropped, h, use_reentrant=False)
            h = self.ckpt(self.dropped, h, use_reentrant=True)
        return self.c(h)


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


gen = torch.Generator().manual_seed(1)
batches = [(torch.randn(8, 6, generator=gen),
            torch.randint(0, 3, (8,), generator=gen)) for _ in range(2)]


def pytorch_step(model, opt, batch, seed=None):
    if seed is None:
        loss = loss_fn(model, *batch)
    else:
        with model_zoo.ReferenceDropout(seed):
            loss = loss_fn(model, *batch)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach()


def compare(form, n):
    """The largest difference of the compiled step from PyTorch's (the
    parameters and the loss over two steps), whether the first layer
    moved in both as it must (it does not in `reentrant`) and the step's
    counts hold, and the step's IR."""
    torch.manual_seed(0)
    model = Net(form)
    reference = copy.deepcopy(model)
    reference.checkpoints = form != "dropout"
    initial = model.a.weight.detach().clone()
    opt, ref_opt = sgd(model), sgd(reference)
    step = compile_train_step(model, loss_fn, opt, example_inputs=batches[0],
                              micro_batches=n)
    worst = 0.0
    for batch in batches:
        seed = model_zoo.next_seed() if form == "dropout" else None
        loss = step(*batch)
        ref = pytorch_step(reference, ref_opt, batch, seed)
        worst = max([worst, abs(loss.item() - ref.item())] +
                    [(p - q).abs().max().item() for p, q in
                     zip(model.parameters(), reference.parameters())])
    moved = [not torch.equal(m.a.weight, initial) for m in (model, reference)]
    # The checkpoint calls the step read as plain calls: in `non-reentrant`
    # the block, the one nested in it and checkpoint_sequential's first
    # segment (its last runs plainly); two in `dropout`.
    marks = step.memory_report().get("user_checkpoints", 0) if n == 4 else \
        MARKS[form]
    return worst, moved == [form != "reentrant"] * 2 and \
        marks == MARKS[form], next(iter(step._variants.values())).ir


MARKS = {"non-reentrant": 3, "reentrant": 2, "dropout": 2}


def strip_locations(text):
    text = re.sub(r" loc\(#loc\d*\)", "", text)
    return "\n".join(line for line in text.splitlines()
                     if not line.startswith("#loc"))


def same_ir(form, ir):
    """Whether the step's IR `ir` equals the traced step of the model
    without checkpoints, up to locations."""
    model = Net(form, checkpoints=False)
    text, _ = export_train_step(model, loss_fn, sgd(model), batches[0])
    return strip_locations(text) == strip_locations(ir)


def pytorch_checkpoints_plain(form):
    """PyTorch's own checkpointed step is its plain step, bitwise (the
    recompute restores the random state, so a dropout mask is the same)."""
    torch.manual_seed(0)
    base = Net(form)
    steps = []
    for checkpoints in (True, False):
        model = copy.deepcopy(base)
        model.checkpoints = checkpoints
        opt = sgd(model)
        torch.manual_seed(5)
        losses = [pytorch_step(model, opt, batch) for batch in batches]
        steps.append((model, losses))
    (a, la), (b, lb) = steps
    return all(torch.equal(x, y) for x, y in zip(la, lb)) and all(
        torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


ok = True
for form in ("non-reentrant", "reentrant", "dropout"):
    results = [compare(form, n) for n in (1, 4)]
    worst = max(w for w, _, _ in results)
    good = worst < 1e-5 and all(m for _, m, _ in results)
    # Not in `reentrant`, whose first block gets no gradient: the
    # comparison can fail.
    ir = same_ir(form, results[1][2])
    good = good and ir == (form != "reentrant")
    extra = f", same IR as without checkpoints: {ir}"
    if form == "dropout":
        plain = pytorch_checkpoints_plain(form)
        good = good and plain
        extra += (", PyTorch's checkpointed step bitwise its plain one: "
                  f"{plain}")
    ok = ok and good
    print(f"{form}: N = 1, 4 vs PyTorch {worst:.1e}{extra} "
          f"{'OK' if good else 'FAIL'}")
# CHECK: non-reentrant: {{.*}} same IR as without checkpoints: True OK
# CHECK: reentrant: {{.*}} same IR as without checkpoints: False OK
# CHECK: dropout: {{.*}} same IR as without checkpoints: True, PyTorch's checkpointed step bitwise its plain one: True OK


class Refused(nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.a = nn.Linear(6, 3)
        self.drop = nn.Dropout(0.5)
        self.options = options

    def block(self, x):
        return self.drop(self.a(x))

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False, **self.options)


def refusal(**options):
    model = Refused(**options)
    try:
        compile_train_step(model, loss_fn, sgd(model),
                           example_inputs=batches[0], micro_batches=2)
        return "accepted"
    except CompileError as error:
        return f"{error.code}: {str(error).splitlines()[-1]}"


print(refusal(context_fn=lambda: (contextlib.nullcontext(),
                                  contextlib.nullcontext())))
# CHECK: checkpoint-option: {{.*}}torch-checkpoint.py:[[#@LINE-15]]: error: this line calls torch.utils.checkpoint with context_fn=
print(refusal(preserve_rng_state=False))
# CHECK: checkpoint-option: {{.*}}torch-checkpoint.py:[[#@LINE-17]]: error: this line calls torch.utils.checkpoint with preserve_rng_state=False around a block that draws random numbers
restored = tuc._checkpoint_impl is IMPL and \
    torch.Tensor.requires_grad_ is REQUIRES_GRAD
print(f"restored after a refusal: {restored}")
# CHECK: restored after a refusal: True
sys.exit(not (ok and restored))
