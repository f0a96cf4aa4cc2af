# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Selections by a boolean mask whose only use is a reduction (_masked):
# x[mask].mean(), F.cross_entropy(linear(h[mask]), labels[mask]),
# nll_loss(log_softmax(x[mask], -1), ..., weight) and
# masked_select(...).sum() are computed over the full batch with the mask
# applied in the reduction. Against PyTorch's full-batch step (zoo.check),
# N = 1 and N = 4 on a batch of 7 (a remainder), three steps whose second
# batch selects nothing: PyTorch's mean of nothing is nan (the loss is nan
# on both sides; the gradient of the term is zero), its sum 0. What else
# meets a selection is refused at its line: its size used as a value, an
# operation that mixes its rows (branches on its size: torch-zoo-guards.py).

import sys

import torch
import torch.nn.functional as F

import model_zoo
import zoo

model_zoo.quiet()
B = 7


def batch(gen, calls=[0]):
    """The MLP's batch and a mask that selects nothing in every other
    batch."""
    return zoo.masked_mlp_batch(gen, B, calls)


WEIGHT = torch.tensor([1.0, 2.0, 0.5, 1.5, 3.0])


def mean_of_selection(model, x, y, keep):
    out = model(x)
    chosen = out[keep]
    return (F.cross_entropy(out, y) + chosen.square().mean() +
            0.1 * F.nll_loss(F.log_softmax(chosen, -1), y[keep],
                             weight=WEIGHT, reduction="sum"))


def loss_of_selection(model, x, y, keep):
    h = model.net[:-1](x)
    logits = model.net[-1](h[keep])  # the last layer on the selected rows
    positive = torch.masked_select(h, h > 0)
    return F.cross_entropy(logits, y[keep]) + 0.1 * positive.sum()


def size_of_selection(model, x, y, keep):
    out = model(x)
    chosen = out[keep]
    return chosen.sum() / chosen.shape[0]  # size


def running_sum(model, x, y, keep):
    return model(x)[keep].cumsum(0).sum()  # cumsum


failures = 0
# CHECK: mean-of-selection sgd N=1: {{.*}} OK
# CHECK: mean-of-selection sgd N=4: {{.*}} OK
failures += zoo.check("mean-of-selection", zoo.MLP, batch, mean_of_selection,
                      optimizers=("sgd",), ns=(1, 4))
# CHECK: loss-of-selection adamw N=1: {{.*}} OK
# CHECK: loss-of-selection adamw N=4: {{.*}} OK
failures += zoo.check("loss-of-selection", zoo.MLP, batch, loss_of_selection,
                      optimizers=("adamw",), ns=(1, 4))


# CHECK: size: refused: {{.*}}torch-zoo-masked.py:{{[0-9]+}}: error: this line uses as a value the size of a selection by a boolean mask
# CHECK: size: located: True
zoo.refused("size", zoo.MLP(), size_of_selection, batch,
            f"{__file__}:{zoo.line_of(__file__, 'size')}:")
# CHECK: cumsum: refused: {{.*}}torch-zoo-masked.py:{{[0-9]+}}: error: this line applies cumsum to a selection by a boolean mask
# CHECK: cumsum: located: True
zoo.refused("cumsum", zoo.MLP(), running_sum, batch,
            f"{__file__}:{zoo.line_of(__file__, 'cumsum')}:")


sys.exit(failures)
