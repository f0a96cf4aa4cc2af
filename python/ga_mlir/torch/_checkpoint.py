"""The model's own activation checkpoints under the trace.

A model may call torch.utils.checkpoint.checkpoint (or checkpoint_sequential,
or a Hugging Face model after `gradient_checkpointing_enable()`, whose layers
call a functools.partial of it) so that PyTorch recomputes a block in the
backward instead of keeping its activations. Neither form traces under
torch.func: use_reentrant=False installs saved-tensor hooks ("torch.func
transforms don't yet support saved tensor hooks"), use_reentrant=True is an
autograd.Function that recomputes by running autograd inside its backward.

What checkpoint(fn, *args, **kwargs) computes is fn(*args, **kwargs): PyTorch
restores the random number generator's state for the recompute, so that a
dropout mask is the one of the forward. In the compiled step the compiler
itself chooses what to keep and what to recompute (compile_train_step's
`max_memory=` and `recompute=`, docs/Guide.md), so the user's marks are
not kept: while the frontend runs the model (the probe, the draws, the
trace), each checkpoint call is the plain call (substituted()), and the step
is the one of the same model without checkpoints.

The substitution replaces torch.utils.checkpoint's `_checkpoint_impl`, the
one function that checkpoint(), its decorator form and checkpoint_sequential
all call (a module global, looked up at each call, so that the names a
model imported checkpoint under and transformers' partial of it are covered
too); it is restored on the way out, exceptions included. A torch without
it is left alone (the checkpoint is then refused by the trace, as before).

Where the plain call is not what PyTorch computes:
  - use_reentrant=True (the default) whose tensor arguments need no
    gradient while gradients are recorded: PyTorch's outputs need none
    either ("None of the inputs have requires_grad=True"), so the block's
    parameters get no gradient from it: the outputs are detached, as there;
  - preserve_rng_state=False around a block that draws random numbers: the
    recompute draws other numbers than the forward, and PyTorch's gradient
    is not the one of its loss: refused at the call;
  - context_fn (selective activation checkpointing, or any contexts the
    forward runs under): refused at the call (the compiler's recompute set
    replaces a selective policy).
determinism_check, debug, early_stop and respect_saved_tensors_hooks only
change what PyTorch checks or hooks around its recompute, which the compiled
step does not do: accepted.
"""

import contextlib

import torch
import torch.utils.checkpoint as _torch_checkpoint

from ._common import CompileError
from ._locations import current_user_line


def _refusal(why):
    return (f"{current_user_line()}: error: this line calls "
            f"torch.utils.checkpoint with {why}")


def _detached(value):
    """`value` with each tensor in it (in tuples, lists and dicts)
    detached."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(v) for v in value)
    if isinstance(value, dict):
        return type(value)((k, _detached(v)) for k, v in value.items())
    return value


def _reentrant(output, differentiable):
    """What CheckpointFunction.apply returns for `output`: it runs the
    function without recording gradients, and only the tensors that it
    returns as the output or as elements of an output tuple (a plain
    tuple, also for a named one) become its differentiable outputs (when
    any argument needs a gradient, `differentiable`); any other tensor
    comes out detached."""
    def top(value):
        if isinstance(value, torch.Tensor):
            return value if differentiable else value.detach()
        return _detached(value)
    if isinstance(output, tuple):  # a named tuple comes out plain
        return tuple(top(v) for v in output)
    return top(output)


def _plain(function, args, kwargs, *, use_reentrant=None,
           preserve_rng_state=True,
           context_fn=_torch_checkpoint.noop_context_fn, debug=False,
           respect_saved_tensors_hooks=None, **ignored):
    """`function(*args, **kwargs)` as the call of _checkpoint_impl would
    compute it (see the module's docstring); PyTorch's own refusals of
    misused options are kept (its words)."""
    reentrant = True if use_reentrant is None else use_reentrant
    if reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if reentrant and (context_fn is not _torch_checkpoint.noop_context_fn
                      or debug is not False
                      or respect_saved_tensors_hooks is not None):
        raise ValueError(
            "Passing `context_fn`, `debug`, or `respect_saved_tensors_hooks` "
            "is only supported when use_reentrant=False.")
    if context_fn is not _torch_checkpoint.noop_context_fn:
        raise CompileError(_refusal(
            "context_fn= (selective activation checkpointing), which the "
            "compiled step does not follow: remove it; the compiled step "
            "chooses what it keeps and recomputes itself (compile_train_step"
            "'s max_memory= and recompute=)"), code="checkpoint-option")
    state = None if preserve_rng_state else torch.get_rng_state()
    output = function(*args, **kwargs)
    if state is not None and not torch.equal(state, torch.get_rng_state()):
        raise CompileError(_refusal(
            "preserve_rng_state=False around a block that draws random "
            "numbers (dropout): PyTorch's recompute then draws other "
            "numbers than its forward, and its gradient is not the one of "
            "its loss: pass preserve_rng_state=True, or call the block "
            "without checkpoint (the compiled step chooses what it "
            "recomputes itself)"), code="checkpoint-option")
    _substituted.calls += 1
    if reentrant and torch.is_grad_enabled():
        return _reentrant(output, any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args))
    return output


_requires_grad_ = torch.Tensor.requires_grad_


def _requires_grad(self, requires_grad=True):
    """Tensor.requires_grad_, a no-op where it asks for what the tensor
    has: transformers' gradient checkpointing makes the input embeddings'
    output require a gradient by a forward hook (enable_input_require_grads,
    for use_reentrant=True), which torch.func refuses to trace even then."""
    if requires_grad and self.requires_grad:
        return self
    return _requires_grad_(self, requires_grad)


class _Substituted(contextlib.ContextDecorator):
    """The substitution's context (re-entrant: nested uses keep the outer
    one's); `calls` counts the checkpoint calls it read as plain calls."""

    def __init__(self):
        self.depth, self.calls, self.original = 0, 0, None

    def __enter__(self):
        if self.depth == 0:
            self.original = getattr(_torch_checkpoint, "_checkpoint_impl",
                                    None)
            if self.original is not None:
                _torch_checkpoint._checkpoint_impl = _plain
            torch.Tensor.requires_grad_ = _requires_grad
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        if self.depth == 0:
            torch.Tensor.requires_grad_ = _requires_grad_
            if self.original is not None:
                _torch_checkpoint._checkpoint_impl = self.original
        return False


_substituted = _Substituted()


def substituted():
    """While inside: each torch.utils.checkpoint call of the model is the
    plain call of its function (see the module's docstring)."""
    return _substituted


@contextlib.contextmanager
def counting():
    """Yields a one-element list that holds, on the way out, how many
    checkpoint calls were read as plain calls inside (all runs of the
    model together)."""
    before = _substituted.calls
    counted = [0]
    try:
        yield counted
    finally:
        counted[0] = _substituted.calls - before
