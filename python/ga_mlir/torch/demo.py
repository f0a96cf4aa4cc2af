"""Ready-made models for `python -m ga_mlir.train --model ...` (and a
template for your own): a build function returns (model, loss_fn, optimizer,
batches), where `loss_fn(model, *inputs)` is the loss of one whole batch and
`batches` an iterable of input tuples."""

import torch


def digits_mlp(batch=256, hidden=128, steps=50, lr=0.1, momentum=0.9,
               seed=0):
    """An MLP classifier (64-hidden-10, ReLU, cross-entropy, SGD with
    momentum) on scikit-learn's digits (1797 8x8 images shipped with the
    package: no download); `steps` batches of `batch` samples, wrapping
    around the data set."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(digits.target), generator=generator)
    x = torch.tensor(digits.data, dtype=torch.float32)[order] / 16.0
    y = torch.tensor(digits.target, dtype=torch.int64)[order]
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)

    def loss_fn(model, x, y):
        return torch.nn.functional.cross_entropy(model(x), y)

    batches = []
    for k in range(steps):
        index = (torch.arange(batch) + k * batch) % len(y)
        batches.append((x[index], y[index]))
    return model, loss_fn, optimizer, batches
