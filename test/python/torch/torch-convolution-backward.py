# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The backward of convolutions (_convolutions.convolution_backward): the
# weight gradient as one forward convolution with the samples as the reduced
# channels, the input gradient (and a transposed convolution) by phases. First
# the forms against PyTorch's float64 gradients for every kind (1 x 1 and
# k x k, stride 1 to 3, padding, dilation, groups, 1-d to 3-d, transposed),
# several seeds; then a small CNN of strided 1 x 1 and 3 x 3 convolutions
# compiled at N = 2: no tensor of its imported step may be larger than twice
# the largest tensor PyTorch's own forward holds (torch-mlir's lowering of
# the weight gradient held C_in x B x C_out x the input's pixels: 32x here),
# and its gradients agree with float64 PyTorch as PyTorch's own do.

import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_mlir import ir

from ga_mlir.torch import compile_train_step
from ga_mlir.torch._convolutions import (convolution_backward,
                                         transposed_convolution)

torch.set_num_threads(1)
failures = 0

# (dimensions, kernel, stride, padding, dilation, groups)
CASES = [(2, 1, 1, 0, 1, 1), (2, 1, 2, 0, 1, 1), (2, 3, 1, 1, 1, 1),
         (2, 3, 2, 1, 1, 1), (2, 3, 2, 0, 1, 1), (2, 3, 1, 2, 2, 1),
         (2, 3, 2, 1, 1, 2), (2, 3, 2, 1, 2, 4), (2, 2, 3, 1, 1, 1),
         (2, 5, 2, 2, 2, 1), (1, 3, 2, 1, 1, 1), (1, 4, 3, 0, 2, 2),
         (3, 3, 2, 1, 1, 1), (3, 1, 2, 0, 1, 2)]
worst = 0.0
for n, k, s, p, d, g in CASES:
    for seed in range(3):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(3, 4, *[9 - n] * n, dtype=torch.float64,
                        generator=gen, requires_grad=True)
        w = torch.randn(8, 4 // g, *[k] * n, dtype=torch.float64,
                        generator=gen, requires_grad=True)
        y = torch.ops.aten.convolution(x, w, None, [s] * n, [p] * n,
                                       [d] * n, False, [0] * n, g)
        gy = torch.randn(y.shape, dtype=torch.float64, generator=gen)
        expected = torch.autograd.grad(y, [x, w], gy)
        got = convolution_backward(gy, x.detach(), w.detach(), [8], [s] * n,
                                   [p] * n, [d] * n, False, [0] * n, g,
                                   [True, True, False])[:2]
        # The transposed convolution of the same parameters (output_padding
        # up to stride - 1).
        op = min(s, d) - 1
        t = (F.conv_transpose1d, F.conv_transpose2d,
             F.conv_transpose3d)[n - 1](gy, w, None, s, p, op, g, d)
        t2 = transposed_convolution(gy, w, None, s, p, op, g, d)
        worst = max([worst] + [(a - b).abs().max().item() for a, b in
                               zip(expected + (t,), got + (t2,))])
ok = worst <= 1e-12
failures += not ok
# CHECK: forms vs float64 PyTorch, 42 cases: {{.*}} OK
print(f"forms vs float64 PyTorch, {3 * len(CASES)} cases: {worst:.2g}",
      "OK" if ok else "FAIL")


class Strided(nn.Module):
    """ResNet's downsampling: 3 x 3 and 1 x 1 convolutions with stride 2
    (the 1 x 1 one widening, its input's last row and column unread), a
    grouped one with stride 2 and a transposed one."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.down3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.down1 = nn.Conv2d(32, 64, 1, stride=2, bias=False)
        self.grouped = nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=4)
        self.up = nn.ConvTranspose2d(64, 16, 3, stride=2, padding=1,
                                     output_padding=1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = torch.tanh(self.stem(x))
        x = torch.tanh(self.down3(x))
        x = torch.tanh(self.grouped(self.down1(x)))
        return self.fc(torch.tanh(self.up(x)).mean((2, 3)))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def largest_forward_tensor(model, x):
    """Bytes of the largest tensor PyTorch's forward holds: every module's
    inputs and outputs and every parameter."""
    sizes = [p.nbytes for p in model.parameters()]

    def hook(module, inputs, output):
        sizes.extend(t.nbytes for t in (*inputs, output) if torch.is_tensor(t))
    handles = [m.register_forward_hook(hook) for m in model.modules()]
    model(x)
    for h in handles:
        h.remove()
    return max(sizes)


def largest_ir_tensor(text):
    """(bytes, type) of the largest tensor an op of the imported step
    (linalg on tensors) makes."""
    largest = [0, None]
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)

        def visit(op):
            for result in op.results:
                t = result.type
                if isinstance(t, ir.RankedTensorType):
                    size = getattr(t.element_type, "width", 64) // 8
                    for extent in t.shape:
                        size *= extent
                    if size > largest[0]:
                        largest[:] = [size, str(t)]
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
    return largest


torch.manual_seed(0)
model = Strided()
gen = torch.Generator().manual_seed(1)
batch = (torch.randn(8, 3, 8, 8, generator=gen),
         torch.randint(0, 5, (8,), generator=gen))
# Gradients from one SGD step with a large rate: (p - p') / rate.
rate = 1e4
reference = copy.deepcopy(model)
step = compile_train_step(model, loss_fn,
                          torch.optim.SGD(model.parameters(), lr=rate),
                          batch, micro_batches=2)
bound = 2 * largest_forward_tensor(reference, batch[0])
size, kind = largest_ir_tensor(next(iter(step._variants.values())).ir)
ok = size <= bound
failures += not ok
# CHECK: largest tensor of the step: {{.*}} OK
print(f"largest tensor of the step: {size} bytes ({kind}), bound {bound}",
      "OK" if ok else "FAIL")

before = [p.detach().clone() for p in model.parameters()]
step(*batch)
ours = [(b - p.detach()) / rate for b, p in zip(before, model.parameters())]
exact = copy.deepcopy(reference).double()
loss_fn(exact, batch[0].double(), batch[1]).backward()
loss_fn(reference, *batch).backward()
for (name, e), o, r in zip(exact.named_parameters(), ours,
                           reference.parameters()):
    scale = e.grad.abs().max().item()
    err = (o.double() - e.grad).abs().max().item() / scale
    theirs = (r.grad.double() - e.grad).abs().max().item() / scale
    ok = err <= max(10 * theirs, 1e-5)
    failures += not ok
    # CHECK-COUNT-11: gradient {{.*}} OK
    print(f"gradient {name}: {err:.2g} relative to float64 (PyTorch "
          f"{theirs:.2g})", "OK" if ok else "FAIL")
sys.exit(failures)
