# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# F.cross_entropy as PyTorch defines it, decomposed without gathers or
# scatters: class weights with ignore_index and label smoothing (the mean
# divides by the summed weights of the targets that count), a sum reduction
# scaled by hand.

import sys

import torch
import torch.nn.functional as F

import zoo

WEIGHT = torch.tensor([1.0, 0.5, 2.0, 1.5, 0.25])


def weighted(model, x, y):
    return F.cross_entropy(model(x), y, weight=WEIGHT, ignore_index=3,
                           label_smoothing=0.2)


def summed(model, x, y):
    return F.cross_entropy(model(x), y, ignore_index=-1, label_smoothing=0.1,
                           reduction="sum") / 7.0


def batch_with_ignored(gen, b=11):
    y = torch.randint(0, 5, (b,), generator=gen)
    y[::3] = -1
    return torch.randn(b, 12, generator=gen), y


failures = zoo.check("ce-weighted", zoo.MLP,
                     lambda gen: zoo.mlp_batch(gen, 11), weighted,
                     ns=(3, 4))
# CHECK: ce-weighted sgd N=3: {{.*}} OK
# CHECK: ce-weighted sgd N=4: {{.*}} OK
# CHECK: ce-weighted adamw N=3: {{.*}} OK
# CHECK: ce-weighted adamw N=4: {{.*}} OK
failures += zoo.check("ce-sum", zoo.MLP, batch_with_ignored, summed,
                      optimizers=("adam",), ns=(4,))
# CHECK: ce-sum adam N=4: {{.*}} OK
sys.exit(failures)
