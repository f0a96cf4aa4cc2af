"""Models, optimizers and the PyTorch oracle of the ga_mlir.torch tests.

check(make_model, make_batch, loss_fn, ...) trains two copies of one model
for several steps: one with PyTorch's own full-batch step
(loss.backward(); optimizer.step(); optimizer.zero_grad()), one with the
compiled step of ga_mlir.torch in N micro-batches, and compares the loss,
every parameter and every optimizer state tensor after each step. It also
checks that the compiled step updated the tensors in place (same storage:
the parameters' from the start, the states' from the first step, which
creates them).
Not a test by itself (lit.local.cfg excludes it).
"""
import copy
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import CompileError, compile_train_step

OPTIMIZERS = {
    "sgd": lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9,
                                     weight_decay=1e-3),
    "nesterov": lambda m: torch.optim.SGD(m.parameters(), lr=0.05,
                                          momentum=0.9, nesterov=True),
    "dampening": lambda m: torch.optim.SGD(m.parameters(), lr=0.05,
                                           momentum=0.5, dampening=0.3,
                                           maximize=True),
    "adamw": lambda m: torch.optim.AdamW(m.parameters(), lr=3e-3,
                                         weight_decay=0.05),
    "adam": lambda m: torch.optim.Adam(m.parameters(), lr=3e-3,
                                       weight_decay=1e-2),
    # beta2 = 0.5: the second moment falls in the first steps, so that the
    # running maximum of amsgrad differs from it.
    "amsgrad-adam": lambda m: torch.optim.Adam(m.parameters(), lr=3e-3,
                                               betas=(0.9, 0.5),
                                               weight_decay=1e-2,
                                               amsgrad=True),
    "amsgrad-adamw": lambda m: torch.optim.AdamW(m.parameters(), lr=3e-3,
                                                 betas=(0.8, 0.5),
                                                 weight_decay=0.05,
                                                 amsgrad=True),
}


# ----------------------------------------------------------------- models
class MLP(nn.Module):
    def __init__(self, d_in=12, hidden=24, classes=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.pool2 = nn.AvgPool2d(2)
        self.fc = nn.Linear(6, classes)

    def forward(self, x):
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


class BatchNormCNN(nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3 * 3 * 3, classes)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.fc(F.max_pool2d(x, 2).flatten(1))


class Block(nn.Module):
    """A GPT-style block: pre-LayerNorm causal self-attention and GELU MLP."""

    def __init__(self, d, heads, mha):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        # No bias on the attention's input projection: the gradient of the
        # key bias is zero (softmax ignores a constant shift), so it is pure
        # rounding noise, which Adam normalizes into updates of size lr in
        # PyTorch and in any other summation order alike.
        self.mha = nn.MultiheadAttention(d, heads, batch_first=True,
                                         bias=False) if mha else None
        if not mha:
            self.qkv = nn.Linear(d, 3 * d, bias=False)
            self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def attention(self, x):
        b, t, d = x.shape
        if self.mha is not None:
            mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
            y, _ = self.mha(x, x, x, attn_mask=mask)  # mha call
            return y
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))  # attention sublayer
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=29, d=16, heads=4, context=8, mha=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.block = Block(d, heads, mha)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t))
        return self.head(self.ln(self.block(x)))


# ----------------------------------------------------------------- losses
def classification_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def lm_loss(model, ids, targets):
    """Token mean over the targets that are not -100, label smoothing 0.1."""
    logits = model(ids)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1), ignore_index=-100,
                           label_smoothing=0.1)


# ----------------------------------------------------------------- oracle
def close(a, b, rtol, atol):
    """(largest difference, whether a and b agree); nan agrees with nan
    (PyTorch's mean of an empty selection, for one)."""
    both = a.isnan() & b.isnan()
    return (a - b).abs().masked_fill(both, 0).max().item(), bool(
        torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def check(name, make_model, make_batch, loss_fn, optimizers=("sgd", "adamw"),
          ns=(1, 3, 4), steps=3, rtol=2e-4, atol=2e-5, before_step=None,
          clip=None, **options):
    """Prints one line per (optimizer, N) and `OK` or the first mismatch;
    returns the number of failures. `optimizers` are names in OPTIMIZERS or
    functions of the parameters; before_step(it, model, optimizer) runs on
    both sides before each step; clip: max_grad_norm on both sides."""
    failures = 0
    for opt_name in optimizers:
        for n in ns:
            torch.manual_seed(1)
            model = make_model()
            ref = copy.deepcopy(model)
            make_opt = OPTIMIZERS.get(opt_name, opt_name)
            label = getattr(opt_name, "__name__", "optimizer") \
                if callable(opt_name) else opt_name
            opt = make_opt(model)
            ref_opt = make_opt(ref)
            gen = torch.Generator().manual_seed(2)
            batch = make_batch(gen)
            if clip is not None:
                options["max_grad_norm"] = clip
            if "micro_batch_size" not in options and \
                    "max_memory" not in options:
                options["micro_batches"] = n
            step = compile_train_step(model, loss_fn, opt,
                                      example_inputs=batch, **options)
            storage = [p.data_ptr() for p in model.parameters()]
            state_storage = None
            worst = {"loss": 0.0, "param": 0.0, "state": 0.0}
            bad = None
            for it in range(steps):
                if it:
                    batch = make_batch(gen)
                if before_step:
                    before_step(it, model, opt)
                    before_step(it, ref, ref_opt)
                loss = step(*batch)
                # States keep their storage once they exist (a change such
                # as switching momentum on may add new ones).
                states_now = {(i, k): t.data_ptr()
                              for i, p in enumerate(model.parameters())
                              for k, t in opt.state[p].items()
                              if isinstance(t, torch.Tensor) and t.dim()}
                if state_storage is None:
                    state_storage = states_now
                elif any(states_now.get(k) != v
                         for k, v in state_storage.items()):
                    bad = bad or f"step {it}: optimizer states were not " \
                        "updated in place"
                else:
                    state_storage = states_now
                ref_loss = pytorch_step(ref, ref_opt, loss_fn, batch, clip)
                pairs = [("loss", loss, ref_loss)]
                for (pn, p), q in zip(model.named_parameters(),
                                      ref.parameters()):
                    pairs.append(("param", p.detach(), q.detach()))
                    s, r = opt.state[p], ref_opt.state[q]
                    if set(s) != set(r):
                        bad = bad or f"step {it}: state keys {sorted(s)} != " \
                            f"{sorted(r)}"
                    for key in set(r) & set(s):
                        pairs.append(("state", s[key], r[key]))
                for b, rb in zip(model.buffers(), ref.buffers()):
                    pairs.append(("state", b, rb))  # running statistics
                for kind, a, b in pairs:
                    err, ok = close(a.float(), b.float(), rtol, atol)
                    worst[kind] = max(worst[kind], err)
                    if not ok and bad is None:
                        bad = f"step {it}: {kind} differs by {err:.3g}"
            if [p.data_ptr() for p in model.parameters()] != storage:
                bad = bad or "parameters were not updated in place"
            status = "OK" if bad is None else "FAIL " + bad
            failures += bad is not None
            print(f"{name} {label} N={n}: max |err| loss "
                  f"{worst['loss']:.2g} param {worst['param']:.2g} state "
                  f"{worst['state']:.2g} {status}", flush=True)
    return failures


def pytorch_step(model, opt, loss_fn, batch, max_norm=None):
    """One training step of PyTorch's own on `batch`: the gradients of
    `loss_fn`, clipped to the norm `max_norm` (None: not clipped), the
    optimizer's step. Returns the loss (detached)."""
    loss = loss_fn(model, *batch)
    loss.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    opt.step()
    opt.zero_grad()
    return loss.detach()


def mlp_batch(gen, b=10):
    return (torch.randn(b, 12, generator=gen),
            torch.randint(0, 5, (b,), generator=gen))


def mlp_adamw_case(seed=0, b=16):
    """The MLP with AdamW (lr 1e-3) and a batch of b samples, seeded: the
    model of the tests that compile for another target."""
    torch.manual_seed(seed)
    model = MLP()
    batch = (torch.randn(b, 12), torch.randint(0, 5, (b,)))
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3), batch


def cnn_batch(gen, b=7):
    return (torch.randn(b, 1, 8, 8, generator=gen),
            torch.randint(0, 6, (b,), generator=gen))


def lm_batch(gen, b=6, t=8, vocab=29):
    ids = torch.randint(0, vocab, (b, t), generator=gen)
    targets = torch.randint(0, vocab, (b, t), generator=gen)
    drop = torch.rand(b, t, generator=gen) < 0.25
    return ids, targets.masked_fill(drop, -100)


# -------------------------------------------------------------- pooling
def pooling_input(shape, ties):
    """A random input of `shape` that requires its gradient; with `ties`,
    small integers (several maxima per pooling window)."""
    x = torch.randn(*shape)
    if ties:
        x = torch.randint(0, 3, x.shape).float()
    return x.requires_grad_(True)


def max_pool2d_reference(x, *args, **kwargs):
    """PyTorch's own max_pool2d of `x` (its `args` and `kwargs`): (output,
    indices, a random upstream gradient, the gradient of `x` it gives)."""
    y, indices = F.max_pool2d(x, *args, return_indices=True, **kwargs)
    g = torch.randn_like(y)
    (grad,) = torch.autograd.grad(y, x, g)
    return y, indices, g, grad


# ------------------------------------------------------------- refusals
def line_of(path, marker):
    """The number of the line of `path` that ends with `# marker`."""
    with open(path) as f:
        return next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))


def refused(name, model, loss_fn, make_batch, where):
    """Compiles `loss_fn` on `model` (SGD, N = 2) and prints the refusal's
    first line and whether it names `where`, or ACCEPTED."""
    try:
        compile_train_step(model, loss_fn,
                           torch.optim.SGD(model.parameters(), lr=0.1),
                           example_inputs=make_batch(
                               torch.Generator().manual_seed(0)),
                           micro_batches=2)
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        first = str(error).splitlines()[0]
        print(f"{name}: refused: {first}")
        print(f"{name}: located: {where in first}")


def call_refused(what, call):
    """Calls `call()`, which must raise CompileError: prints `what: ` and
    its message, or `what: ACCEPTED`. Returns the number of failures (0 or
    1)."""
    try:
        call()
    except CompileError as error:
        print(f"{what}: {error}")
        return 0
    print(f"{what}: ACCEPTED")
    return 1


def masked_mlp_batch(gen, batch, calls):
    """The MLP's batch and a mask of about half its samples that selects
    nothing in every other batch (`calls`: the caller's one-element
    counter of batches made)."""
    x, y = mlp_batch(gen, batch)
    keep = torch.rand(batch, generator=gen) < 0.5
    calls[0] += 1
    if calls[0] % 2 == 0:
        keep[:] = False
    return x, y, keep
