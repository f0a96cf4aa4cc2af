# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Branches on the size of a selection by a boolean mask (_guards): DeBERTa-v2's
# own sequence-classification loss (`label_index = (labels >= 0).nonzero()`,
# `if label_index.size(0) > 0:` a gather of the labeled rows and a
# cross-entropy, else 0) and a hand-written `if x[mask].numel() > 0:`. The
# mask depends on the inputs alone: each batch's outcome is computed before
# the compiled code runs, and a batch whose outcome differs gets a step traced
# for it. Against PyTorch's full-batch step (zoo.check), N = 1, 3 (a
# remainder) and 4 on a batch of 8, three steps whose second batch selects
# nothing (every label -100: PyTorch's loss is 0, no gradient from it). A
# branch on a mask computed from the model's output or written in place,
# and arithmetic on a size, are refused at their lines.

import sys

import torch
import torch.nn.functional as F

import model_zoo
import zoo

model_zoo.quiet()
B = 8


def deberta_classifier():
    return model_zoo._hf(
        "DebertaV2Config", "DebertaV2ForSequenceClassification",
        vocab_size=32, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=16, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, pooler_dropout=0.0,
        relative_attention=False, pad_token_id=0, num_labels=3)


def labeled_text(gen, calls=[0]):
    """Token ids, attention mask and labels, some -100; every label -100 in
    every other batch."""
    ids, mask, labels = model_zoo.text_classes(gen, B)
    labels[torch.rand(B, generator=gen) < 0.4] = -100
    calls[0] += 1
    if calls[0] % 2 == 0:
        labels[:] = -100
    return ids, mask, labels


def deberta_loss(model, ids, mask, labels):
    out = model(input_ids=ids, attention_mask=mask, labels=labels)
    # DeBERTa's own loss; the term 0 gives PyTorch's backward a graph when
    # no label is kept (its loss is then the constant 0).
    return out.loss + 0.0 * out.logits.sum()


def mlp_batch(gen, calls=[0]):
    return zoo.masked_mlp_batch(gen, B, calls)


def guarded_mean(model, x, y, keep):
    out = model(x)
    loss = F.cross_entropy(out, y)
    chosen = out[keep]
    if chosen.numel() > 0:
        loss = loss + chosen.square().mean()
    return loss


failures = 0
# CHECK: deberta-v2-own-loss adamw N=1: {{.*}} OK
# CHECK: deberta-v2-own-loss adamw N=3: {{.*}} OK
# CHECK: deberta-v2-own-loss adamw N=4: {{.*}} OK
failures += zoo.check("deberta-v2-own-loss", deberta_classifier, labeled_text,
                      deberta_loss, optimizers=("adamw",), ns=(1, 3, 4))
# CHECK: guarded-mean sgd N=3: {{.*}} OK
failures += zoo.check("guarded-mean", zoo.MLP, mlp_batch, guarded_mean,
                      optimizers=("sgd",), ns=(3,))


def guard_on_output(model, x, y, keep):
    out = model(x)
    chosen = out[out[:, 0] > 0]
    if chosen.size(0) > 0:  # output-guard
        return chosen.mean()
    return out.sum()


def size_as_value(model, x, y, keep):
    out = model(x)
    chosen = out[keep]
    return out.sum() * chosen.size(0)  # size-value


def guard_after_write(model, x, y, keep):
    out = model(x)
    keep = keep.clone()
    keep &= y > 0  # a write in place: the mask's replay would miss it
    if out[keep].size(0) > 0:  # write-guard
        return out[keep].mean()
    return out.sum()


def refused(name, loss_fn, marker):
    zoo.refused(name, zoo.MLP(), loss_fn, mlp_batch,
                f"{__file__}:{zoo.line_of(__file__, marker)}:")


# CHECK: output-guard: refused: {{.*}}torch-zoo-guards.py:{{[0-9]+}}: error: this line branches on the size of a selection by a boolean mask that is computed from the model's values
# CHECK: output-guard: located: True
refused("output-guard", guard_on_output, "output-guard")
# CHECK: write-guard: refused: {{.*}}torch-zoo-guards.py:{{[0-9]+}}: error: this line branches on the size of a selection by a boolean mask {{.*}}or after a write in place into the step's inputs
# CHECK: write-guard: located: True
refused("write-guard", guard_after_write, "write-guard")
# CHECK: size-value: refused: {{.*}}torch-zoo-guards.py:{{[0-9]+}}: error: this line uses as a value the size of a selection by a boolean mask
# CHECK: size-value: located: True
refused("size-value", size_as_value, "size-value")
sys.exit(failures)
