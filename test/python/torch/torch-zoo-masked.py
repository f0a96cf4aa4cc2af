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
# meets a selection is refused at its line: its size (DeBERTa-v2's own
# sequence-classification loss branches on `label_index.size(0) > 0`), an
# operation that mixes its rows.

import sys

import torch
import torch.nn.functional as F

import model_zoo
import zoo
from ga_mlir.torch import CompileError, compile_train_step

model_zoo.quiet()
B = 7


def batch(gen, calls=[0]):
    """The MLP's batch and a mask that selects nothing in every other
    batch."""
    x, y = zoo.mlp_batch(gen, B)
    keep = torch.rand(B, generator=gen) < 0.5
    calls[0] += 1
    if calls[0] % 2 == 0:
        keep[:] = False
    return x, y, keep


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


def line_of(path, marker):
    with open(path) as f:
        return next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))


def refused(name, model, loss_fn, make_batch, where):
    """The refusal's first line, and whether it names `where`."""
    try:
        compile_train_step(model, loss_fn,
                           torch.optim.SGD(model.parameters(), lr=0.1),
                           example_inputs=make_batch(
                               torch.Generator().manual_seed(0)),
                           micro_batches=2)
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        first = str(error).splitlines()[0]
        print(f"{name}: refused: {first}")
        print(f"{name}: located: {where in first}")


# CHECK: size: refused: {{.*}}torch-zoo-masked.py:{{[0-9]+}}: error: this line reads the size of a selection by a boolean mask
# CHECK: size: located: True
refused("size", zoo.MLP(), size_of_selection, batch,
        f"{__file__}:{line_of(__file__, 'size')}:")
# CHECK: cumsum: refused: {{.*}}torch-zoo-masked.py:{{[0-9]+}}: error: this line applies cumsum to a selection by a boolean mask
# CHECK: cumsum: located: True
refused("cumsum", zoo.MLP(), running_sum, batch,
        f"{__file__}:{line_of(__file__, 'cumsum')}:")


def deberta_classifier():
    return model_zoo._hf(
        "DebertaV2Config", "DebertaV2ForSequenceClassification",
        vocab_size=32, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=16, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pooler_dropout=0.0,
        relative_attention=False, pad_token_id=0, num_labels=3)


# DeBERTa-v2's loss: `label_index = (labels >= 0).nonzero()`, then `if
# label_index.size(0) > 0:` a gather and a mean, else 0: the branch is
# taken once, at the trace.
# CHECK: deberta-v2-classifier: refused: {{.*}}modeling_deberta_v2.py:{{[0-9]+}}: error: this line reads the size of a selection by a boolean mask {{.*}}a branch on it
# CHECK: deberta-v2-classifier: located: True
def guard_line():
    from transformers.models.deberta_v2 import modeling_deberta_v2 as module
    with open(module.__file__) as f:
        line = next(i + 1 for i, text in enumerate(f)
                    if "if label_index.size(0) > 0:" in text)
    return f"{module.__file__}:{line}:"


refused("deberta-v2-classifier", deberta_classifier(), model_zoo.hf_loss,
        lambda g: model_zoo.text_classes(g, B), guard_line())
sys.exit(failures)
