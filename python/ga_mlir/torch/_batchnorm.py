"""BatchNorm in training mode while tracing: refused unless its
statistics are recomputed over the whole batch (recompute_statistics), and
then traced as explicit operations whose running-statistics updates are
results of the step."""

import contextlib

import torch

from ._common import CompileError, patched_forwards
from ._locations import current_user_line


@contextlib.contextmanager
def _batch_norm_check(model, exact_statistics=False):
    """Refuses BatchNorm in training mode at the user's line that calls it,
    unless `exact_statistics` (--ga-accumulate's recompute-statistics: the
    batch statistics are computed over the whole batch in an earlier loop,
    and the running statistics are updated from them as PyTorch does, as
    results of the step). A cumulative average (momentum=None) is refused
    either way: its factor 1 / num_batches_tracked is a Python float that
    PyTorch computes from the buffer at every call."""
    handles = []

    def hook(module, args):
        if not module.training:
            return
        reason = None
        if not exact_statistics:
            reason = (f"{type(module).__name__} in training mode normalizes "
                      "with statistics of the whole batch, which "
                      "micro-batches cannot reproduce: pass "
                      "recompute_statistics=True (exact: the statistics in "
                      "an earlier loop over the micro-batches), or use "
                      "model.eval() for the normalization layers, or "
                      "GroupNorm/LayerNorm")
        elif module.momentum is None and module.track_running_stats:
            reason = (f"{type(module).__name__}(momentum=None) in training "
                      "mode: the cumulative average's factor 1 / "
                      "num_batches_tracked is computed in Python from the "
                      "buffer at every call, which a compiled step cannot "
                      "do: give a momentum")
        if reason:
            where = current_user_line()
            raise CompileError(f"{where}: error: {reason}",
                               code="unsupported-layer" if exact_statistics
                               else "batch-norm-training")
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            handles.append(m.register_forward_pre_hook(hook))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _training_batch_norms(model):
    """(name prefix, module) of the BatchNorm layers in training mode that
    keep running statistics."""
    return [(prefix + "." if prefix else "", m)
            for prefix, m in model.named_modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
            and m.training and m.track_running_stats]


def _batch_norm_buffers(model):
    return {prefix + n for prefix, _ in _training_batch_norms(model)
            for n in ("running_mean", "running_var", "num_batches_tracked")}


@contextlib.contextmanager
def _explicit_batch_norm(model, updates):
    """While tracing: BatchNorm layers in training mode as explicit
    operations whose running-statistics updates go to `updates` (name ->
    new value) instead of being written into the buffers (an in-place write
    inside the grad transform is lost in tracing). The same arithmetic as
    PyTorch's kernel: biased variance to normalize, unbiased in the running
    variance, running = (1 - momentum) * running + momentum * batch."""
    forwards = []
    for prefix, m in _training_batch_norms(model):
        def forward(x, m=m, prefix=prefix):
            m._check_input_dim(x)
            dims = [0] + list(range(2, x.dim()))
            shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
            count = x.numel() // x.shape[1]
            mean = x.mean(dims)
            var = x.var(dims, correction=0)
            y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + m.eps)
            if m.affine:
                y = y * m.weight.view(shape) + m.bias.view(shape)
            momentum = m.momentum
            updates[prefix + "running_mean"] = \
                momentum * mean.detach() + (1 - momentum) * m.running_mean
            updates[prefix + "running_var"] = momentum * var.detach() * (
                count / (count - 1)) + (1 - momentum) * m.running_var
            updates[prefix + "num_batches_tracked"] = \
                m.num_batches_tracked + 1
            return y
        forwards.append((m, forward))
    with patched_forwards(forwards):
        yield
