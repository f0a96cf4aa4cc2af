"""The PyTorch configurations of `python3 -m ga_mlir.train`.

The same MLP as the MLIR step of bench/gen_mlp_ce_step.py (x @ W + b, ReLU,
softmax cross-entropy, mean over the batch), from the same initial
parameters, trained with torch.optim.SGD(lr, momentum) on the same batches:

* "PyTorch loop N=n": PyTorch's own gradient accumulation, as users write
  it: the batch split into n micro-batches (torch.tensor_split: sizes
  ceil(B/n) then floor(B/n), the split --ga-accumulate uses), each
  micro-batch's mean loss scaled by its share of the batch (b_i / B, so that
  the sum is the full batch's mean even with a remainder), `.backward()`
  accumulating into `.grad`, then one `optimizer.step()` and
  `optimizer.zero_grad()`.
* "compile_train_step N=n": ga_mlir.torch.compile_train_step of the same
  model, loss and optimizer with micro_batches=n (static_temporaries=False,
  so that every temporary is on the heap the counter sees).

Memory: the peak of one optimizer step is measured as for the MLIR steps:
the bytes of the parameters, the optimizer state that exists before the step
and the batch, plus the peak growth of the live heap during the step, from
libGAHeapCount.so (LD_PRELOAD). The counter sees PyTorch's tensors: c10's CPU
allocator takes them from posix_memalign, which the counter wraps (checked:
a torch.empty of 4 MiB adds 4 MiB to the live bytes). tracemalloc would not
(it sees Python's allocator only), and ru_maxrss is a high-water mark of the
whole process (the libraries, the other configurations), not of a step.
"""

import time


def available():
    """Whether torch (and ga_mlir.torch's dependencies) can be imported."""
    try:
        import torch  # noqa: F401
        return True
    except Exception:  # a broken install must not break the MLIR analytics
        return False


def _model(params):
    import torch

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = torch.nn.ParameterList(
                torch.nn.Parameter(torch.from_numpy(p.copy()))
                for p in params[0::2])
            self.biases = torch.nn.ParameterList(
                torch.nn.Parameter(torch.from_numpy(p.copy()))
                for p in params[1::2])

        def forward(self, x):
            last = len(self.weights) - 1
            for i, (w, b) in enumerate(zip(self.weights, self.biases)):
                x = x @ w + b
                if i < last:
                    x = torch.relu(x)
            return x

    return MLP()


def _loss(model, x, y):
    import torch.nn.functional as F
    return F.cross_entropy(model(x), y)


def _state_bytes(model, optimizer):
    total = sum(p.nbytes for p in model.parameters())
    for state in optimizer.state.values():
        total += sum(t.nbytes for t in state.values()
                     if hasattr(t, "nbytes"))
    return total


def _measure(counter, step, arg_bytes):
    """(result of step(), seconds, peak bytes or None)."""
    counter.reset_peak()
    before = counter.live()
    start = time.perf_counter()
    result = step()
    seconds = time.perf_counter() - start
    peak = counter.peak()
    if not counter.active:
        return result, seconds, None
    return result, seconds, arg_bytes + (peak - before)


def accumulation_step(model, optimizer, x, y, n):
    """PyTorch's accumulation loop: n micro-batches, one optimizer step.
    Returns the loss of the whole batch (the sum of the scaled losses)."""
    import torch
    total = x.shape[0]
    loss = 0.0
    for xi, yi in zip(torch.tensor_split(x, n), torch.tensor_split(y, n)):
        part = _loss(model, xi, yi) * (xi.shape[0] / total)
        part.backward()
        loss += part.item()
    optimizer.step()
    optimizer.zero_grad()
    return loss


def train_loop(params, data, lr, mu, n, counter):
    """PyTorch's accumulation loop with n micro-batches; yields per step
    (loss, seconds, peak bytes)."""
    import torch
    model = _model(params)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=mu)
    for xb, yb in data:
        x, y = torch.from_numpy(xb), torch.from_numpy(yb)
        args = _state_bytes(model, optimizer) + x.nbytes + y.nbytes
        loss, seconds, peak = _measure(
            counter, lambda: accumulation_step(model, optimizer, x, y, n),
            args)
        yield loss, seconds, peak


def compiled(params, example, lr, mu, n):
    """compile_train_step of the same model, loss and optimizer; returns
    (model, optimizer, step). Compiling is not part of any timing."""
    import torch
    from .torch import compile_train_step
    model = _model(params)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=mu)
    x, y = (torch.from_numpy(a) for a in example)
    step = compile_train_step(model, _loss, optimizer, example_inputs=(x, y),
                              micro_batches=n, static_temporaries=False)
    return model, optimizer, step


def train_compiled(built, data, counter):
    """The compiled step of `compiled(...)`; yields per step (loss, seconds,
    peak bytes)."""
    import torch
    model, optimizer, step = built
    for xb, yb in data:
        x, y = torch.from_numpy(xb), torch.from_numpy(yb)
        args = _state_bytes(model, optimizer) + x.nbytes + y.nbytes
        loss, seconds, peak = _measure(counter, lambda: step(x, y), args)
        yield float(loss), seconds, peak
