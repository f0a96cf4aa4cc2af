# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A model's own autograd.Functions: the compiled step runs their backward
# as written, not the derivative of their forward. A straight-through
# round (its derivative would be zero) in the older form, forward(ctx, ...),
# with a non-tensor argument kept on ctx; a gradient reversal in the form
# with setup_context; both in one model, against PyTorch's full-batch step
# (N = 3 on a batch of 7: a remainder). A Function that draws a random mask
# and saves it: its backward reads the forward's draw. A forward(ctx, ...)
# that marks its output dirty is refused at its line.

import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from ga_mlir.torch import CompileError, compile_train_step


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.limit = 2.0
        return torch.round(x * scale) / scale

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (x.abs() < ctx.limit).to(grad.dtype), None


class Reverse(torch.autograd.Function):
    @staticmethod
    def forward(x, weight):
        return x.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.weight = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return -ctx.weight * grad, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 16)
        self.b = nn.Linear(16, 16)
        self.c = nn.Linear(16, 3)

    def forward(self, x):
        h = RoundSTE.apply(self.a(x) * 2, 4.0)
        h = Reverse.apply(torch.tanh(self.b(h)), 0.5)
        return self.c(h)


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def momentum(model):
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


torch.manual_seed(0)
model = Net()
reference = copy.deepcopy(model)
initial = model.a.weight.detach().clone()
opt, ref_opt = momentum(model), momentum(reference)
gen = torch.Generator().manual_seed(1)
batches = [(torch.randn(7, 6, generator=gen),
            torch.randint(0, 3, (7,), generator=gen)) for _ in range(2)]
step = compile_train_step(model, loss_fn, opt, example_inputs=batches[0],
                          micro_batches=3)
worst = 0.0
for x, y in batches:
    loss = step(x, y)
    ref_opt.zero_grad()
    ref_loss = loss_fn(reference, x, y)
    ref_loss.backward()
    ref_opt.step()
    worst = max([worst, abs(loss.item() - ref_loss.item())] +
                [(p - q).abs().max().item()
                 for p, q in zip(model.parameters(), reference.parameters())])
# The straight-through gradient moves `a` (the derivative of round would
# not): a lost custom backward cannot pass.
moved = (model.a.weight - initial).abs().max().item()
ok = worst < 1e-5 and moved > 1e-3
print(f"custom backward: max difference {worst:.1e}, a moved by "
      f"{moved:.1e} {'OK' if ok else 'FAIL'}")
# CHECK: custom backward: max difference {{.*}} OK


class RandomMask(torch.autograd.Function):
    """Draws its mask in the forward and reads the saved one in the
    backward: the backward must see the forward's draw, not another."""

    @staticmethod
    def forward(ctx, x):
        mask = (torch.rand_like(x) < 0.5).to(x.dtype)
        ctx.save_for_backward(mask)
        return x * mask

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        return grad * mask


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        return RandomMask.apply(x * self.w).sum()


# loss = w * sum(x * mask), so its gradient is loss / w exactly when the
# backward reads the forward's mask; and the draws are by sample, so N = 1
# and N = 4 agree.
torch.manual_seed(0)
x4 = torch.rand(8, 16, generator=gen) + 0.5
grads = []
for n in (1, 4):
    scale = Scale()
    step = compile_train_step(scale, lambda m, x: m(x),
                              torch.optim.SGD(scale.parameters(), lr=0.01),
                              example_inputs=(x4,), micro_batches=n)
    torch.manual_seed(3)
    loss = step(x4).item()
    grads.append(((1.5 - scale.w.item()) / 0.01, loss / 1.5))
consistent = all(abs(g - l) <= 1e-4 * abs(l) for g, l in grads) and \
    abs(grads[0][1] - grads[1][1]) <= 1e-5 * abs(grads[0][1])
ok = ok and consistent
print(f"saved random mask: gradient {grads[0][0]:.4f}, loss / w "
      f"{grads[0][1]:.4f}, N = 4 {grads[1][1]:.4f} "
      f"{'OK' if consistent else 'FAIL'}")
# CHECK: saved random mask: {{.*}} OK


class Dirty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(2)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class DirtyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 3)

    def forward(self, x):
        return Dirty.apply(self.a(x))


dirty = DirtyNet()
try:
    compile_train_step(dirty, loss_fn, momentum(dirty),
                       example_inputs=batches[0], micro_batches=3)
    print("accepted")
except CompileError as error:
    print(str(error).splitlines()[-1])
# CHECK: torch-autograd-functions.py:[[#@LINE-24]]: error: this autograd.Function's forward(ctx, ...) calls ctx.mark_dirty
sys.exit(not ok)
