#!/usr/bin/env python3
"""Train an MLP on scikit-learn's digits with a compiled accumulation step.

The digits data set (1797 8x8 images of handwritten digits) ships inside
scikit-learn, so nothing is downloaded. An MLP 64-128-64-10 (GELU) is trained
with AdamW on batches of 128 images, each step in 4 micro-batches through
ga_mlir.torch.compile_train_step; a copy of the same model trained by
PyTorch's own full-batch step runs alongside, and each step prints both
losses and the largest difference between the two models' parameters.

GELU rather than ReLU: the example's criterion (the two models within 1e-4)
measures rounding, and ReLU's kink turns rounding into a different gradient.
With ReLU, a hidden unit's pre-activation for one image came within 5e-8 of
0 at step 3; which side of 0 it falls depends on the order in which the
BLAS sums the product (OpenBLAS's AVX-512 kernels against PyTorch's MKL),
and AdamW then moved the two models 1.2e-4 apart in one step, 2.5e-3 after
30. With GELU they stay within 3e-6 whichever OpenBLAS kernels run.

    .venv/bin/python examples/torch_mlp_digits.py   (after scripts/setup.sh)
"""
import copy
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The ga_mlir package of the build tree (scripts/setup.sh builds build/), or
# wherever PYTHONPATH points.
sys.path.append(os.path.join(os.environ.get("GA_BUILD_DIR",
                                            os.path.join(HERE, "..", "build")),
                             "python_packages"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from ga_mlir.torch import compile_train_step  # noqa: E402

BATCH, MICRO_BATCHES = 128, 4
# GA_MLIR_MAX_STEPS shortens the run (as for python -m ga_mlir.train).
STEPS = min(30, int(os.environ.get("GA_MLIR_MAX_STEPS") or 30))


def loss_fn(model, images, labels):
    return F.cross_entropy(model(images), labels)


def main():
    digits = load_digits()
    images = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    labels = torch.tensor(digits.target, dtype=torch.int64)
    torch.manual_seed(0)
    order = torch.randperm(len(images))
    test, train = order[:297], order[297:]

    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64),
                          nn.GELU(), nn.Linear(64, 10))
    reference = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ref_optimizer = torch.optim.AdamW(reference.parameters(), lr=3e-3)

    def batch(step):
        picked = train[(step * BATCH + torch.arange(BATCH)) % len(train)]
        return images[picked], labels[picked]

    start = time.time()
    step = compile_train_step(model, loss_fn, optimizer,
                              example_inputs=batch(0),
                              micro_batches=MICRO_BATCHES)
    print(f"compiled in {time.time() - start:.1f} s: batch {BATCH} in "
          f"{MICRO_BATCHES} micro-batches of {BATCH // MICRO_BATCHES}")
    print(f"{'step':>4} {'loss (ga-mlir)':>15} {'loss (PyTorch)':>15} "
          f"{'max |param diff|':>17}")
    worst = 0.0
    for i in range(STEPS):
        x, y = batch(i)
        loss = step(x, y)
        ref_loss = loss_fn(reference, x, y)
        ref_loss.backward()
        ref_optimizer.step()
        ref_optimizer.zero_grad()
        diff = max((p - q).abs().max().item() for p, q in
                   zip(model.parameters(), reference.parameters()))
        worst = max(worst, diff)
        print(f"{i:>4} {loss.item():>15.6f} {ref_loss.item():>15.6f} "
              f"{diff:>17.2e}")
    with torch.no_grad():
        accuracy = (model(images[test]).argmax(1) == labels[test]).float()
    print(f"test accuracy after {STEPS} steps: {accuracy.mean().item():.3f}; "
          f"largest parameter difference to PyTorch: {worst:.2e}")
    return 0 if worst < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
