# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# loss_fn may return (loss, metrics): the compiled step returns them in the
# same structure, with PyTorch's values for the whole batch, for N = 1 and
# N = 4 micro-batches of a batch of 10 (sizes 3, 3, 2, 2: a mean over the
# batch is the mean over all 10 samples, not the mean of the micro-batches'
# means). Checked against PyTorch's own full-batch step (the loss, every
# metric, the parameters after the step). A metric that is not a sum, mean,
# max or min over the samples or a per-sample tensor is refused at its line.

import copy
import sys
import tempfile

import torch
import torch.nn.functional as F

import zoo
from ga_mlir.torch import CompileError, compare, compile_train_step, \
    load_step


def accuracy(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y), \
        (logits.argmax(-1) == y).float().mean()


def token_normalized(model, x, y):
    # Labels -100 are padding: the loss and the metric are sums over the
    # valid samples divided by their count (a data-only statistic).
    logits = model(x)
    valid = (y != -100)
    nll = F.cross_entropy(logits, y.clamp(min=0), reduction="none")
    count = valid.sum()
    loss = (nll * valid).sum() / count
    return loss, {"nll_sum": (nll * valid).sum(), "tokens": count,
                  "token_mean": (nll * valid).sum() / count}


def several(model, x, y):
    logits = model(x)
    per_sample = F.cross_entropy(logits, y, reduction="none")
    loss = per_sample.mean()
    hits = logits.argmax(-1) == y
    return loss, {"accuracy": hits.float().mean(),
                  "correct": hits.sum(),
                  "worst": per_sample.max(),
                  "stats": (logits.mean(), logits.pow(2).sum(1).mean()),
                  "per_sample": {"loss": per_sample, "logits": logits,
                                 "hit": hits},
                  "aux": None, "constant": torch.tensor(2.0)}


def per_sample(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y), logits.log_softmax(-1)


def padded_batch(gen, b=10):
    x, y = zoo.mlp_batch(gen, b)
    y[::3] = -100
    return x, y


def flat(structure):
    return torch.utils._pytree.tree_flatten_with_path(structure)


def against_pytorch(name, loss_fn, make_batch=zoo.mlp_batch, ns=(1, 4)):
    """One step compiled with each N against PyTorch's full-batch step."""
    failures = 0
    for n in ns:
        torch.manual_seed(1)
        model = zoo.MLP()
        ref = copy.deepcopy(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        batch = make_batch(torch.Generator().manual_seed(2))
        step = compile_train_step(model, loss_fn, opt, example_inputs=batch,
                                  micro_batches=n)
        worst, bad = 0.0, None
        for it in range(2):  # the second call takes the fast path
            batch = make_batch(torch.Generator().manual_seed(3 + it))
            loss, metrics = step(*batch)
            ref_loss, ref_metrics = loss_fn(ref, *batch)
            ref_loss.backward()
            ref_opt.step()
            ref_opt.zero_grad()
            got, want = flat(metrics), flat(ref_metrics)
            if got[1] != want[1]:
                bad = f"structure {got[1]} != {want[1]}"
                break
            pairs = [("loss", loss, ref_loss)] + [
                (torch.utils._pytree.keystr(path), a, b)
                for (path, a), (_, b) in zip(got[0], want[0])] + [
                ("param", p, q) for p, q in zip(model.parameters(),
                                                ref.parameters())]
            for what, a, b in pairs:
                if a is None or b is None:  # None stays None
                    bad = bad or (None if a is b else f"{what}: {a} != {b}")
                    continue
                b = b.detach()
                if a.shape != b.shape or a.dtype != b.dtype:
                    bad = bad or f"{what}: {list(a.shape)} {a.dtype} != " \
                        f"{list(b.shape)} {b.dtype}"
                    continue
                err = (a.double() - b.double()).abs().max().item()
                worst = max(worst, err)
                if not torch.allclose(a.double(), b.double(), rtol=2e-4,
                                      atol=2e-5):
                    bad = bad or f"step {it}: {what} differs by {err:.3g}"
        failures += bad is not None
        names = [torch.utils._pytree.keystr(k) for k, _ in flat(metrics)[0]]
        print(f"{name} N={n}: metrics {names} "
              f"max |err| {worst:.2g} "
              f"{'OK' if bad is None else 'FAIL ' + bad}",
              flush=True)
    return failures


failures = 0
# CHECK: accuracy N=1: {{.*}} OK
# CHECK: accuracy N=4: {{.*}} OK
failures += against_pytorch("accuracy", accuracy)
# CHECK: token-normalized N=1: {{.*}} OK
# CHECK: token-normalized N=4: {{.*}} OK
failures += against_pytorch("token-normalized", token_normalized,
                            padded_batch)
# CHECK: several N=1: {{.*}} OK
# CHECK: several N=4: {{.*}} OK
failures += against_pytorch("several", several)
# CHECK: per-sample N=4: {{.*}} OK
failures += against_pytorch("per-sample", per_sample, ns=(4,))


# A saved step returns the same structure (the signature records it), and
# compare() reports the 0-d metrics of every configuration beside the loss.
# CHECK: saved: same results: True
torch.manual_seed(1)
model = zoo.MLP()
other = copy.deepcopy(model)
batch = zoo.mlp_batch(torch.Generator().manual_seed(5))
step = compile_train_step(model, several, torch.optim.SGD(
    model.parameters(), lr=0.1), example_inputs=batch, micro_batches=4)
with tempfile.TemporaryDirectory() as directory:
    step.save(directory)
    loaded = load_step(directory, other, torch.optim.SGD(other.parameters(),
                                                         lr=0.1))
    got, want = flat(loaded(*batch)), flat(step(*batch))
same = got[1] == want[1] and all(
    a is b if a is None else torch.equal(a, b)
    for (_, a), (_, b) in zip(got[0], want[0]))
print(f"saved: same results: {same}")
failures += not same
# CHECK: compare: metrics ['accuracy', 'constant', 'correct', 'stats.0', 'stats.1', 'worst'] as PyTorch's: True
model = zoo.MLP()
report = compare(model, several, torch.optim.SGD(model.parameters(), lr=0.1),
                 [zoo.mlp_batch(torch.Generator().manual_seed(k))
                  for k in range(2)], micro_batches=[4], progress=False)
base, ga = (c["metrics"] for c in report["configurations"])
agree = sorted(base) == sorted(ga) and all(
    abs(a - b) <= 1e-4 * max(1.0, abs(b)) for k in base
    for a, b in zip(ga[k], base[k]))
print(f"compare: metrics {sorted(ga)} as PyTorch's: {agree}")
failures += not agree


def refused(name, loss_fn, marker):
    """The refusal's first line, and whether it names the line that ends
    with `# marker` in this file."""
    with open(__file__) as f:
        line = next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))
    model = zoo.MLP()
    try:
        compile_train_step(model, loss_fn, torch.optim.SGD(
            model.parameters(), lr=0.1), micro_batches=2,
            example_inputs=zoo.mlp_batch(torch.Generator().manual_seed(0)))
        print(f"{name}: ACCEPTED")
        return 1
    except CompileError as error:
        first = next(t for t in str(error).splitlines() if "error" in t)
        print(f"{name}: refused: {first}")
        located = f"{__file__}:{line}:" in first
        print(f"{name}: located at the metric's line: {located}")
        return not located


def centered(model, x, y):
    logits = model(x)
    spread = (logits - logits.mean(0)).pow(2).mean()  # centered
    return F.cross_entropy(logits, y), {"spread": spread}


def first_sample(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y), logits[0]  # first sample


def python_number(model, x, y):  # python number
    logits = model(x)
    return F.cross_entropy(logits, y), {"count": 10}


# A metric of a batch-normalized quantity: each sample's value uses the mean
# over the whole batch, which a micro-batch does not have.
# CHECK: centered: refused: {{.*}}torch-metrics.py:{{[0-9]+}}: error: each sample's computation here uses a value computed from the whole batch
# CHECK: centered: located at the metric's line: True
failures += refused("centered", centered, "centered")
# CHECK: first-sample: refused: {{.*}}torch-metrics.py:{{[0-9]+}}: error: this line selects, writes or adds particular samples of the batch
# CHECK: first-sample: located at the metric's line: True
failures += refused("first-sample", first_sample, "first sample")
# CHECK: python-number: refused: {{.*}}torch-metrics.py:{{[0-9]+}}: error: loss_fn returns an int as metrics['count']: the compiled step returns tensors only
# CHECK: python-number: located at the metric's line: True
failures += refused("python-number", python_number, "python number")
sys.exit(failures)
