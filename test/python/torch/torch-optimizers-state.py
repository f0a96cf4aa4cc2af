# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The traced optimizer step (python/ga_mlir/torch/_optimizers.py) beyond
# one group of fixed settings:
# * parameter groups with different settings and an LR scheduler, settings
#   changed between steps: a setting the class takes as a tensor is an
#   argument of the step (no new trace), one it takes as a Python number
#   only is baked into the trace and a change traces the step again;
# * optimizer.state_dict() in torch.optim's own format: saved after
#   compiled steps and loaded into a plain torch optimizer, and the other
#   way round, training continues exactly as PyTorch's own;
# * the refusals (CompileError in PyTorch's words).

import copy
import sys

import torch

import optimizer_zoo
import zoo
from ga_mlir.torch import CompileError, compile_train_step

failures = 0


def groups_adam(m):
    return torch.optim.Adam([
        {"params": [m.fc1.weight, m.fc1.bias], "lr": 2e-2,
         "weight_decay": 1e-2},
        {"params": [m.fc2.weight, m.fc2.bias], "betas": (0.8, 0.7)}],
        lr=1e-2)


def groups_sgd(m):
    return torch.optim.SGD([
        {"params": [m.fc1.weight, m.fc1.bias], "momentum": 0.9},
        {"params": [m.fc2.weight, m.fc2.bias], "lr": 0.02}],
        lr=0.05)


schedulers = {}


def schedule(it, model, opt):
    """An exponential LR schedule on both sides; at step 3, beta1 of group
    1 changes (a tensor argument of Adam's step) and at step 5 the weight
    decay of group 0 (baked into the trace: the step is traced again)."""
    if id(opt) not in schedulers:
        schedulers[id(opt)] = torch.optim.lr_scheduler.ExponentialLR(
            opt, gamma=0.8)
    elif it:
        schedulers[id(opt)].step()
    if it == 3 and "betas" in opt.param_groups[1]:
        opt.param_groups[1]["betas"] = (0.85, 0.7)
    if it == 5:
        opt.param_groups[0]["weight_decay"] = 3e-2


for make in (groups_adam, groups_sgd):
    failures += zoo.check("groups", optimizer_zoo.Tiny, optimizer_zoo.batch,
                          zoo.classification_loss, optimizers=(make,),
                          ns=(1, 3), steps=8, before_step=schedule)
# CHECK: groups groups_adam N=1: {{.*}} OK
# CHECK: groups groups_adam N=3: {{.*}} OK
# CHECK: groups groups_sgd N=1: {{.*}} OK
# CHECK: groups groups_sgd N=3: {{.*}} OK


def traces(make, changes):
    """How many steps (variants) a compiled step holds after 6 calls under
    an LR scheduler and `changes(it, optimizer)`."""
    torch.manual_seed(0)
    model = optimizer_zoo.Tiny()
    opt = make(model)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    batch = optimizer_zoo.batch(torch.Generator().manual_seed(1))
    step = compile_train_step(model, zoo.classification_loss, opt, batch,
                              micro_batches=2)
    for it in range(6):
        changes(it, opt)
        step(*batch)
        sched.step()
    return len(step._variants)


# Adam: lr, beta1 and eps are arguments (one trace); SGD: lr is (its
# first call, which creates the momentum buffers from the gradient, is
# traced within the same step); Adam's weight decay is read in a Python
# branch (`if weight_decay != 0`): each new value is a new trace.
print("adam lr, beta1, eps:", traces(
    groups_adam, lambda it, o: o.param_groups[1].update(
        betas=(0.9 - 0.01 * it, 0.7), eps=1e-8 * (it + 1))))
print("sgd lr:", traces(groups_sgd, lambda it, o: None))
print("adam weight decay:", traces(
    groups_adam, lambda it, o: o.param_groups[0].update(
        weight_decay=1e-2 * (1 + it // 2))))
# CHECK: adam lr, beta1, eps: 1
# CHECK: sgd lr: 1
# CHECK: adam weight decay: 3


def round_trip(name, compiled_first):
    """3 steps, optimizer.state_dict() loaded into a new optimizer, 3 more
    steps: compiled then PyTorch (or PyTorch then compiled), against six
    steps of PyTorch alone."""
    torch.manual_seed(0)
    model = optimizer_zoo.Tiny()
    ref = copy.deepcopy(model)
    make = optimizer_zoo.OPTIMIZERS[name]
    ref_opt = make(ref)
    gen = torch.Generator().manual_seed(1)
    batches = [optimizer_zoo.batch(gen) for _ in range(6)]
    for b in batches:
        zoo.classification_loss(ref, *b).backward()
        ref_opt.step()
        ref_opt.zero_grad()

    def eager(opt, bs):
        for b in bs:
            zoo.classification_loss(model, *b).backward()
            opt.step()
            opt.zero_grad()

    def compiled(opt, bs):
        step = compile_train_step(model, zoo.classification_loss, opt,
                                  bs[0], micro_batches=3)
        for b in bs:
            step(*b)

    first, second = (compiled, eager) if compiled_first else \
        (eager, compiled)
    opt = make(model)
    first(opt, batches[:3])
    saved = copy.deepcopy(opt.state_dict())
    opt = make(model)
    opt.load_state_dict(saved)
    second(opt, batches[3:])
    worst = max((p - q).abs().max().item()
                for p, q in zip(model.parameters(), ref.parameters()))
    for p, q in zip(model.parameters(), ref.parameters()):
        for k, v in ref_opt.state[q].items():
            worst = max(worst, (opt.state[p][k] - v).abs().max().item())
    ok = worst < 2e-6 and all(
        set(opt.state[p]) == set(ref_opt.state[q])
        for p, q in zip(model.parameters(), ref.parameters()))
    way = "compiled->torch" if compiled_first else "torch->compiled"
    print(f"state_dict {name} {way}: max |err| {worst:.2g} "
          f"{'OK' if ok else 'FAIL'}")
    return not ok


for name in ("adam-amsgrad", "sgd-nesterov", "radam", "adafactor"):
    for compiled_first in (True, False):
        failures += round_trip(name, compiled_first)
# CHECK: state_dict adam-amsgrad compiled->torch: {{.*}} OK
# CHECK: state_dict adam-amsgrad torch->compiled: {{.*}} OK
# CHECK: state_dict sgd-nesterov compiled->torch: {{.*}} OK
# CHECK: state_dict sgd-nesterov torch->compiled: {{.*}} OK
# CHECK: state_dict radam compiled->torch: {{.*}} OK
# CHECK: state_dict radam torch->compiled: {{.*}} OK
# CHECK: state_dict adafactor compiled->torch: {{.*}} OK
# CHECK: state_dict adafactor torch->compiled: {{.*}} OK


def refused(what, make):
    torch.manual_seed(0)
    model = optimizer_zoo.Tiny()
    batch = optimizer_zoo.batch(torch.Generator().manual_seed(1))
    try:
        compile_train_step(model, zoo.classification_loss, make(model),
                           batch, micro_batches=2)
        print(what, "compiled: FAIL")
        return 1
    except CompileError as error:
        print(what, "refused:", str(error).splitlines()[0])
        return 0


failures += refused("lbfgs", lambda m: torch.optim.LBFGS(m.parameters()))
# CHECK: lbfgs refused: torch.optim.LBFGS evaluates the loss again through a closure several times per step
failures += refused("sparse_adam",
                    lambda m: torch.optim.SparseAdam(m.parameters()))
# CHECK: sparse_adam refused: torch.optim.SparseAdam needs sparse gradients (nn.Embedding(sparse=True)), and the compiled step's gradients are dense


class Clipped(torch.optim.Optimizer):
    """SGD that halves its step where the gradient's norm exceeds 1: a
    Python branch on a tensor's value, which a step traced once for every
    call cannot take (its .item() and min/max would be traced)."""

    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                scale = 0.5 if p.grad.norm() > 1 else 1.0
                p.add_(p.grad, alpha=-group["lr"] * scale)


failures += refused("clipped", lambda m: Clipped(m.parameters()))
# CHECK: clipped refused: {{.*}}torch-optimizers-state.py:[[# @LINE-5]]: error: Clipped.step() cannot be traced (it reads a tensor's value in Python: a branch on it

def hooked(m):
    opt = torch.optim.Adam(m.parameters())
    opt.register_step_post_hook(lambda *args: None)
    return opt


failures += refused("hooks", hooked)
# CHECK: hooks refused: Adam: step hooks (register_step_pre_hook, register_step_post_hook) are not supported


class Counting(torch.optim.Optimizer):
    """Keeps its step count as a Python int: refused (the traced step
    would bake the count in)."""

    def __init__(self, params):
        super().__init__(params, dict(lr=0.1))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = state.get("step", 0) + 1
                p.add_(p.grad, alpha=-group["lr"] / state["step"])


failures += refused("python state", lambda m: Counting(m.parameters()))
# CHECK: python state refused: Counting keeps 'step' in its state as a Python int
sys.exit(failures)
