# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# compile_train_step's options and state handling, each against PyTorch's
# full-batch step: micro_batch_size, max_grad_norm (clip_grad_norm_),
# amsgrad (Adam and AdamW), nesterov, dampening with maximize, Adam's L2
# weight decay, a learning-rate
# schedule, parameter groups with frozen and excluded parameters, a parameter
# without gradient, a batch in dimension 1, optimizer state from PyTorch's own earlier steps (used in
# place), and the library cache.

import os
import sys

import torch
import torch.nn.functional as F

import zoo
from ga_mlir.torch import compile_train_step

failures = 0

# CHECK: micro-batch-size sgd N=0: {{.*}} OK
failures += zoo.check("micro-batch-size", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=("sgd",), ns=(0,),
                      micro_batch_size=4)

# The gradient norm at the first step is about 0.7: the clipping acts.
# CHECK: clip sgd N=3: {{.*}} OK
# CHECK: clip adamw N=4: {{.*}} OK
failures += zoo.check("clip", zoo.MLP, zoo.mlp_batch, zoo.classification_loss,
                      optimizers=("sgd",), ns=(3,), clip=0.3)
failures += zoo.check("clip", zoo.MLP, zoo.mlp_batch, zoo.classification_loss,
                      optimizers=("adamw",), ns=(4,), clip=0.3)

# amsgrad: the state max_exp_avg_sq, compared with PyTorch's after each of 4
# steps; the running maximum differs from exp_avg_sq in PyTorch's own run
# (printed below), so the comparison sees it.
# CHECK: amsgrad amsgrad-adam N=3: {{.*}} OK
# CHECK: amsgrad amsgrad-adamw N=4: {{.*}} OK
failures += zoo.check("amsgrad", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=("amsgrad-adam",),
                      ns=(3,), steps=4)
failures += zoo.check("amsgrad", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=("amsgrad-adamw",),
                      ns=(4,), steps=4)
torch.manual_seed(1)
_model = zoo.MLP()
_opt = zoo.OPTIMIZERS["amsgrad-adamw"](_model)
_gen = torch.Generator().manual_seed(2)
for _ in range(4):
    zoo.classification_loss(_model, *zoo.mlp_batch(_gen)).backward()
    _opt.step()
    _opt.zero_grad()
_differs = sum(int((s["max_exp_avg_sq"] != s["exp_avg_sq"]).sum())
               for s in _opt.state.values())
# CHECK: amsgrad: max_exp_avg_sq differs from exp_avg_sq in {{[1-9][0-9]*}} elements
print(f"amsgrad: max_exp_avg_sq differs from exp_avg_sq in {_differs} "
      "elements")
failures += _differs == 0

# CHECK: optimizers nesterov N=3: {{.*}} OK
# CHECK: optimizers dampening N=3: {{.*}} OK
# CHECK: optimizers adam N=3: {{.*}} OK
failures += zoo.check("optimizers", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss,
                      optimizers=("nesterov", "dampening", "adam"), ns=(3,))


def schedule(it, model, opt):
    for group in opt.param_groups:
        group["lr"] = 0.01 * (it + 1)


# CHECK: schedule adamw N=4: {{.*}} OK
failures += zoo.check("schedule", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=("adamw",), ns=(4,),
                      before_step=schedule, steps=4)


def groups(model):
    """Two groups with their own hyper-parameters; one frozen layer and one
    parameter outside the optimizer."""
    net = model.net
    net[2].weight.requires_grad_(False)
    return torch.optim.AdamW([
        {"params": [net[0].weight, net[0].bias], "lr": 1e-2,
         "weight_decay": 0.0},
        {"params": [net[2].bias, net[4].weight, net[2].weight]},
    ], lr=3e-3, betas=(0.8, 0.99), weight_decay=0.1, eps=1e-7)


# CHECK: groups groups N=3: {{.*}} OK
failures += zoo.check("groups", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=(groups,), ns=(3,))


class WithUnused(zoo.MLP):
    """A layer the loss never uses: no gradient, so AdamW leaves it (and its
    state) alone, in PyTorch and in the compiled step."""

    def __init__(self):
        super().__init__()
        self.unused = torch.nn.Linear(3, 3)


# CHECK: unused adamw N=3: {{.*}} OK
failures += zoo.check("unused", WithUnused, zoo.mlp_batch,
                      zoo.classification_loss, optimizers=("adamw",), ns=(3,))


def transposed_loss(model, x_t, y):
    return F.cross_entropy(model(x_t.t()), y)


# CHECK: batch-dims sgd N=4: {{.*}} OK
failures += zoo.check(
    "batch-dims", zoo.MLP,
    lambda gen: (lambda x, y: (x.t().contiguous(), y))(*zoo.mlp_batch(gen)),
    transposed_loss, optimizers=("sgd",), ns=(4,), batch_dims=(1, 0))


# State from PyTorch's own steps: the compiled step continues from it, in
# place (the same tensors), and PyTorch continues after it.
torch.manual_seed(3)
model = zoo.MLP()
opt = zoo.OPTIMIZERS["adamw"](model)
gen = torch.Generator().manual_seed(4)
batches = [zoo.mlp_batch(gen) for _ in range(5)]
ref = zoo.MLP()
ref.load_state_dict(model.state_dict())
ref_opt = zoo.OPTIMIZERS["adamw"](ref)


def torch_step(m, o, batch):
    zoo.classification_loss(m, *batch).backward()
    o.step()
    o.zero_grad()


for b in batches[:2]:
    torch_step(model, opt, b)
    torch_step(ref, ref_opt, b)
states = [(opt.state[p]["exp_avg"].data_ptr(),
           opt.state[p]["exp_avg_sq"].data_ptr()) for p in model.parameters()]
step = compile_train_step(model, zoo.classification_loss, opt,
                          example_inputs=batches[2], micro_batches=3)
for b in batches[2:4]:
    step(*b)
    torch_step(ref, ref_opt, b)
torch_step(model, opt, batches[4])
torch_step(ref, ref_opt, batches[4])
same = states == [(opt.state[p]["exp_avg"].data_ptr(),
                   opt.state[p]["exp_avg_sq"].data_ptr())
                  for p in model.parameters()]
err = max((p - q).abs().max().item()
          for p, q in zip(model.parameters(), ref.parameters()))
steps = {int(opt.state[p]["step"]) for p in model.parameters()}
ok = same and err < 1e-5 and steps == {5}
failures += not ok
# CHECK: continued: states in place True, steps {5}, {{.*}} OK
print(f"continued: states in place {same}, steps {steps}, max |err| "
      f"{err:.2g} {'OK' if ok else 'FAIL'}")

# The same step compiled again comes from the cache.
cache = os.environ["GA_MLIR_CACHE_DIR"]
before = sorted(os.listdir(cache))
compile_train_step(model, zoo.classification_loss, opt,
                   example_inputs=batches[2], micro_batches=3)
after = sorted(os.listdir(cache))
# CHECK: cache: {{[1-9][0-9]*}} libraries, none added
print(f"cache: {len(before)} libraries, "
      f"{'none' if before == after else len(after) - len(before)} added")
sys.exit(failures)
