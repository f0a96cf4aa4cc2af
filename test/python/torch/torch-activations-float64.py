# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Every element-wise activation of torch.nn.functional, forward and
# backward, against PyTorch's own step in float64 (an oracle that shares no
# code with the lowering): one model with a branch per activation, each
# branch its own parameters and its own term of the loss, so a wrong
# constant in one activation's lowering shows in that branch alone. torch-mlir's GELU with
# approximate="tanh" scaled by 0.797724 instead of sqrt(2 / pi): its branch
# moved 300x further from float64 than PyTorch's float32 step; a lowering
# that is only rounded differently stays within a few times PyTorch's.
#
# Criterion per branch: the largest distance of the compiled step's
# parameters from float64's at most 8x PyTorch float32's, plus 2^-24 of the
# parameters' scale (the few-ulp differences of vectorized exp/tanh/erf).

import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import compile_train_step

ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "mish": F.mish,
    "elu": F.elu,
    "selu": F.selu,
    "celu": lambda x: F.celu(x, alpha=0.7),
    "softplus": lambda x: F.softplus(x, beta=2.0),
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "relu6": F.relu6,
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 0.5),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "logsigmoid": F.logsigmoid,
    "softsign": F.softsign,
    "tanhshrink": F.tanhshrink,
    # Its backward read an uninitialized noise buffer (torch-mlir).
    "rrelu_eval": lambda x: F.rrelu(x, training=False),
}


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.ModuleDict({k: nn.Linear(8, 24) for k in ACTIVATIONS})
        self.out = nn.ModuleDict({k: nn.Linear(24, 3) for k in ACTIVATIONS})

    def forward(self, x):
        # Inputs spread over [-6, 6]: both tails and the middle of each.
        return torch.stack([self.out[k](fn(self.inp[k](x) * 4))
                            for k, fn in ACTIVATIONS.items()])


def loss_fn(model, x, y):
    # A sum of one loss per branch: each branch's gradient is its own.
    return (model(x) - y).square().mean(dim=(1, 2)).sum()


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.5)


torch.manual_seed(0)
model = Branches()
pt, f64 = copy.deepcopy(model), copy.deepcopy(model).double()
x, y = torch.randn(16, 8), torch.randn(16, 3)
step = compile_train_step(model, loss_fn, sgd(model), example_inputs=(x, y),
                          micro_batches=2)
step(x, y)
for m, args in ((pt, (x, y)), (f64, (x.double(), y.double()))):
    opt = sgd(m)
    opt.zero_grad()
    loss_fn(m, *args).backward()
    opt.step()

failures = 0
for name in ACTIVATIONS:
    ours = theirs = scale = 0.0
    for part in ("inp", "out"):
        for a, b, c in zip(getattr(model, part)[name].parameters(),
                           getattr(pt, part)[name].parameters(),
                           getattr(f64, part)[name].parameters()):
            ours = max(ours, (a.double() - c).abs().max().item())
            theirs = max(theirs, (b.double() - c).abs().max().item())
            scale = max(scale, c.abs().max().item())
    ok = ours <= 8 * theirs + scale * 2.0 ** -24
    failures += not ok
    print(f"{name}: ours {ours:.1e} PyTorch {theirs:.1e} "
          f"{'OK' if ok else 'FAIL'}")
# CHECK: gelu: {{.*}} OK
# CHECK: gelu_tanh: {{.*}} OK
# CHECK: silu: {{.*}} OK
# CHECK: mish: {{.*}} OK
# CHECK: elu: {{.*}} OK
# CHECK: selu: {{.*}} OK
# CHECK: celu: {{.*}} OK
# CHECK: softplus: {{.*}} OK
# CHECK: hardswish: {{.*}} OK
# CHECK: hardsigmoid: {{.*}} OK
# CHECK: leaky_relu: {{.*}} OK
# CHECK: relu6: {{.*}} OK
# CHECK: hardtanh: {{.*}} OK
# CHECK: sigmoid: {{.*}} OK
# CHECK: tanh: {{.*}} OK
# CHECK: logsigmoid: {{.*}} OK
# CHECK: softsign: {{.*}} OK
# CHECK: tanhshrink: {{.*}} OK
# CHECK: rrelu_eval: {{.*}} OK

# In training mode RReLU draws its slopes: refused at the user's line.
from ga_mlir.torch import CompileError  # noqa: E402

net = nn.Sequential(nn.Linear(8, 4), nn.RReLU(), nn.Linear(4, 3))
try:
    compile_train_step(net, lambda m, x, y: F.mse_loss(m(x), y), sgd(net),
                       example_inputs=(x, y), micro_batches=2)
    print("accepted")
except CompileError as error:
    print(str(error).splitlines()[-1])
# CHECK: error: the step draws random numbers with nn.RReLU (F.rrelu) in training mode
sys.exit(failures)
