"""The model's own autograd.Functions under the trace.

A model may define its gradient by hand: a straight-through estimator, a
gradient reversal, a fused activation with its derivative written out
(BLOOM's GeLUFunction), a router's sparse mixer (PhiMoE). The compiled step
must run that backward, not the derivative of the forward: the two differ
by design in the first two. torch.func, which traces the step, takes an
autograd.Function only in the form with `setup_context` (PyTorch's
"extending torch.func" notes), and functionalize has no rule for one at
all. Most models write the older form, `forward(ctx, *args)`, which saves
what the backward needs into `ctx` while computing.

custom_functions() finds the Functions of the model's eager backward graph
(the probe's loss). While the step is traced, traceable() gives each of
the older form the newer one, and takes it back afterwards (the class is
the user's; nothing of PyTorch is patched):

  forward(*args)                    = the user's forward on a context that
                                      keeps nothing,
  setup_context(ctx, inputs, out)   = the user's forward again on `ctx`,
                                      for what it saves and sets,

so the backward runs as written, on what the forward saved; the forward's
ops appear twice in the trace (the second copy only feeds the backward).
A forward that marks outputs (mark_dirty, mark_non_differentiable) cannot
be split so and is refused at the user's line. The step is then traced in
two stages (_export._trace), as the grouped products are.
"""

import contextlib

import torch

from ._common import CompileError
from ._locations import UNLOCATED, current_user_line


def custom_functions(loss):
    """The autograd.Function classes whose backward the graph of `loss`
    runs (a backward node's class names its Function), in the order met;
    ga_mlir's own are left out."""
    found, seen, stack = [], set(), [getattr(loss, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        cls = getattr(type(node), "_forward_cls", None)
        if isinstance(node, torch.autograd.function.BackwardCFunction) and \
                cls is not None and \
                not cls.__module__.startswith("ga_mlir.") and \
                cls not in found:
            found.append(cls)
        stack.extend(next for next, _ in node.next_functions)
    return found


def _has_setup_context(cls):
    """Whether `cls` (or a base below torch's) defines setup_context."""
    for base in cls.__mro__:
        if base.__module__.startswith("torch."):
            return False
        if "setup_context" in vars(base):
            return True
    return False


class _Keeping:
    """The context of the forward's first run: keeps nothing."""

    def save_for_backward(self, *tensors):
        pass

    def save_for_forward(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        pass

    def mark_dirty(self, *tensors):
        _refuse("mark_dirty")

    def mark_non_differentiable(self, *tensors):
        _refuse("mark_non_differentiable")


class _Saving:
    """The context of the forward's second run: what it saves and sets
    goes to the Function's context `ctx`."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def save_for_backward(self, *tensors):
        self._ctx.save_for_backward(*tensors)

    def set_materialize_grads(self, value):
        self._ctx.set_materialize_grads(value)

    def mark_dirty(self, *tensors):
        _refuse("mark_dirty")

    def mark_non_differentiable(self, *tensors):
        _refuse("mark_non_differentiable")


def _refuse(what):
    raise CompileError(
        f"{current_user_line() or UNLOCATED}: error: this autograd.Function's "
        f"forward(ctx, ...) calls ctx.{what}, which the compiled step cannot "
        "trace in that form: define it with a separate setup_context "
        "(forward(*args) and setup_context(ctx, inputs, output))")


def _split(user):
    """The forward and setup_context of the user's forward(ctx, *args)
    (no default arguments: torch binds the forward's defaults)."""
    def forward(*args):
        return user(_Keeping(), *args)

    def setup_context(ctx, inputs, output):
        user(_Saving(ctx), *inputs)

    return forward, setup_context


@contextlib.contextmanager
def traceable(functions):
    """While inside: each Function of `functions` written as
    forward(ctx, *args) has the setup_context form (see the module's
    docstring); restored on the way out."""
    changed = []
    try:
        for cls in functions:
            if _has_setup_context(cls):
                continue
            changed.append((cls, vars(cls).get("forward")))
            forward, setup_context = _split(cls.forward)
            cls.forward = staticmethod(forward)
            cls.setup_context = staticmethod(setup_context)
        yield
    finally:
        for cls, forward in changed:
            if forward is None:  # inherited: the base's again
                del cls.forward
            else:
                cls.forward = forward
            del cls.setup_context
