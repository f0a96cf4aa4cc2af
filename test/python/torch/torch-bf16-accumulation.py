# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A loss computed in bfloat16: its sums and means of 262144 terms
# accumulate in float32 and are rounded to bfloat16 once, as PyTorch's CPU
# kernels do (ga-widen-accumulators); accumulated in bfloat16 the loss was
# off by 63%. Checked against PyTorch's own step: the loss within one
# bfloat16 ulp (at N = 4 each micro-batch's sum is rounded once), the
# parameters after 3 steps within 1e-6, at N = 1 and 4.

import copy
import sys

import torch
import torch.nn as nn

from ga_mlir.torch import compile_train_step


def loss_fn(model, x):
    h = model(x).bfloat16()
    return (h * h).mean().float() + h.sum().float() * 1e-4


torch.manual_seed(0)
x = torch.rand(64, 64) + 1
failures = 0
for n in (1, 4):
    model = nn.Linear(64, 4096)
    ref = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=1e-3)
    step = compile_train_step(model, loss_fn, opt, (x,), micro_batches=n)
    worst_loss = worst_param = 0.0
    for _ in range(3):
        loss = float(step(x))
        ref_loss = loss_fn(ref, x)
        ref_loss.backward()
        ref_loss = ref_loss.item()
        ref_opt.step()
        ref_opt.zero_grad()
        worst_loss = max(worst_loss, abs(loss - ref_loss) / abs(ref_loss))
        for p, r in zip(model.parameters(), ref.parameters()):
            worst_param = max(worst_param, float((p - r).abs().max()))
    ok = worst_loss <= 2.0**-7 and worst_param <= 1e-6
    failures += not ok
    print(f"bf16 loss N={n}: relative loss error {worst_loss:.2g}, "
          f"max |param err| {worst_param:.2g} {'OK' if ok else 'FAIL'}")
# CHECK: bf16 loss N=1: {{.*}} OK
# CHECK: bf16 loss N=4: {{.*}} OK
sys.exit(failures)
