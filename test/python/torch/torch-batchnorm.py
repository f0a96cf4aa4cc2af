# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# BatchNorm1d/2d in training mode with recompute_statistics=True, against
# PyTorch's full-batch step: the normalization uses the statistics of the
# whole batch (computed in an earlier loop over the micro-batches), and the
# running mean and variance (unbiased) and num_batches_tracked are updated
# as PyTorch updates them, in place in the buffers, every step. N = 1, 3, 4
# (remainders), SGD with momentum and AdamW, 3 steps in a row. Without
# recompute_statistics, and with momentum=None, it is refused at the model's
# line; a forward that updates another buffer in place is refused by name.

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import model_zoo
import zoo
from ga_mlir.torch import CompileError, compile_train_step

failures = 0


class BN1d(nn.Module):
    """Linear without bias before BatchNorm: that bias's gradient is zero by
    symmetry, rounding noise that Adam would scale up (see the README)."""

    def __init__(self, momentum=0.2):
        super().__init__()
        self.l1 = nn.Linear(12, 16, bias=False)
        self.bn = nn.BatchNorm1d(16, momentum=momentum)
        self.l2 = nn.Linear(16, 5)

    def forward(self, x):
        return self.l2(torch.relu(self.bn(self.l1(x))))  # bn1d call


class BN2d(nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, bias=False)
        self.bn = nn.BatchNorm2d(3)
        self.head = nn.Sequential(nn.Linear(3 * 3 * 3, 8, bias=False),
                                  nn.BatchNorm1d(8, affine=False), nn.ReLU(),
                                  nn.Linear(8, classes))

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.head(F.max_pool2d(x, 2).flatten(1))


# CHECK: bn1d sgd N=1: {{.*}} OK
# CHECK: bn1d sgd N=3: {{.*}} OK
# CHECK: bn1d sgd N=4: {{.*}} OK
# CHECK: bn1d adamw N=1: {{.*}} OK
# CHECK: bn1d adamw N=3: {{.*}} OK
# CHECK: bn1d adamw N=4: {{.*}} OK
failures += zoo.check("bn1d", BN1d, zoo.mlp_batch, zoo.classification_loss,
                      ns=(1, 3, 4), recompute_statistics=True)
# CHECK: bn2d sgd N=3: {{.*}} OK
# CHECK: bn2d sgd N=4: {{.*}} OK
# CHECK: bn2d adamw N=3: {{.*}} OK
# CHECK: bn2d adamw N=4: {{.*}} OK
failures += zoo.check("bn2d", BN2d, zoo.cnn_batch, zoo.classification_loss,
                      ns=(3, 4), recompute_statistics=True)



class DeepBN(nn.Module):
    """Three BatchNorm layers in a row with a residual connection: nine
    levels of statistics (mean, variance and the backward's sums of each),
    every loop reading values that earlier loops stored."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(12, 16, bias=False)
        self.bn1 = nn.BatchNorm1d(16)
        self.l2 = nn.Linear(16, 16, bias=False)
        self.bn2 = nn.BatchNorm1d(16, momentum=0.3)
        self.l3 = nn.Linear(16, 16, bias=False)
        self.bn3 = nn.BatchNorm1d(16)
        self.out = nn.Linear(16, 5)

    def forward(self, x):
        h = torch.relu(self.bn1(self.l1(x)))
        h = h + torch.relu(self.bn2(self.l2(h)))
        return self.out(torch.relu(self.bn3(self.l3(h))))


# CHECK: deep-bn sgd N=4: {{.*}} OK
# CHECK: deep-bn adamw N=4: {{.*}} OK
failures += zoo.check("deep-bn", DeepBN, zoo.mlp_batch,
                      zoo.classification_loss, ns=(4,),
                      recompute_statistics=True)
# Against PyTorch's full-batch step in float64 (model_zoo.compare: two
# steps, parameters, running statistics and loss): no further than PyTorch's
# own float32 step.
deep = model_zoo.compare(
    model_zoo.Case(DeepBN, zoo.mlp_batch, zoo.classification_loss,
                   recompute_statistics=True), "sgd", 3, batch=10)
ok = deep["vs_float64"] <= max(2 * deep["pytorch_vs_float64"], 1e-6)
failures += not ok
# CHECK: deep-bn vs float64: {{.*}} OK
print(f"deep-bn vs float64: ours {deep['vs_float64']:.2g}, PyTorch float32 "
      f"{deep['pytorch_vs_float64']:.2g} {'OK' if ok else 'FAIL'}")

# The running statistics move, stay in their storage, and equal PyTorch's.
torch.manual_seed(1)
model = BN1d()
ref = BN1d()
ref.load_state_dict(model.state_dict())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(3)
batch = zoo.mlp_batch(gen)
step = compile_train_step(model, zoo.classification_loss, opt, batch,
                          micro_batches=3, recompute_statistics=True)
storage = [b.data_ptr() for b in model.buffers()]
for _ in range(4):
    batch = zoo.mlp_batch(gen)
    step(*batch)
    zoo.classification_loss(ref, *batch).backward()
    ref_opt.step()
    ref_opt.zero_grad()
moved = float((model.bn.running_mean).abs().max())
err = max(float((a.double() - b.double()).abs().max())
          for a, b in zip(model.buffers(), ref.buffers()))
same = storage == [b.data_ptr() for b in model.buffers()]
ok = moved > 1e-3 and err < 1e-5 and same and \
    int(model.bn.num_batches_tracked) == 4 and step.writes_in_place()
failures += not ok
# CHECK: running statistics: in place True, num_batches_tracked 4, {{.*}} OK
print(f"running statistics: in place {same}, num_batches_tracked "
      f"{int(model.bn.num_batches_tracked)}, max |running_mean| {moved:.3g}, "
      f"max |err| {err:.2g} {'OK' if ok else 'FAIL'}")


def refused(name, model, **options):
    global failures
    try:
        compile_train_step(model, zoo.classification_loss,
                           torch.optim.SGD(model.parameters(), lr=0.1),
                           zoo.mlp_batch(torch.Generator().manual_seed(0)),
                           micro_batches=2, **options)
        failures += 1
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        print(f"{name}: {str(error).splitlines()[0]}")


# CHECK: no-recompute: {{.*}}torch-batchnorm.py:[[LINE:[0-9]+]]: error: BatchNorm1d in training mode normalizes with statistics of the whole batch, which micro-batches cannot reproduce: pass recompute_statistics=True
refused("no-recompute", BN1d())
# CHECK: cumulative: {{.*}}torch-batchnorm.py:[[LINE]]: error: BatchNorm1d(momentum=None) in training mode
refused("cumulative", BN1d(momentum=None), recompute_statistics=True)


class Counter(zoo.MLP):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return self.net(x)


# Refused at the line of the write.
# CHECK: counter: {{.*}}torch-batchnorm.py:[[#@LINE-5]]: error: the forward updates the buffers calls in place
refused("counter", Counter())
sys.exit(failures)
