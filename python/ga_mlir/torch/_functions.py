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

  forward(*args)                    = the user's forward, once, on a context
                                      that records what it saves and sets,
  setup_context(ctx, inputs, out)   = that record given to `ctx`,

so the backward runs as written, on the very tensors the forward saved (a
mask drawn in the forward is the one the backward reads). A forward that
marks outputs (mark_dirty, mark_non_differentiable) cannot be split so and
is refused at the user's line. The step is then traced in two stages
(_export._trace), as the grouped products are.
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


class _Recording:
    """The context of the user's forward: records what it saves and the
    attributes it sets, for setup_context to give the Function's context."""

    def __init__(self):
        object.__setattr__(self, "_saved", ())
        object.__setattr__(self, "_attributes", {})
        object.__setattr__(self, "_materialize", None)

    def __setattr__(self, name, value):
        self._attributes[name] = value

    def __getattr__(self, name):
        try:
            return self._attributes[name]
        except KeyError:
            raise AttributeError(name) from None

    def save_for_backward(self, *tensors):
        object.__setattr__(self, "_saved", tensors)

    def set_materialize_grads(self, value):
        object.__setattr__(self, "_materialize", value)

    def mark_dirty(self, *tensors):
        _refuse("mark_dirty")

    def mark_non_differentiable(self, *tensors):
        _refuse("mark_non_differentiable")

    def replay(self, ctx):
        ctx.save_for_backward(*self._saved)
        for name, value in self._attributes.items():
            setattr(ctx, name, value)
        if self._materialize is not None:
            ctx.set_materialize_grads(self._materialize)


def _refuse(what):
    raise CompileError(
        f"{current_user_line() or UNLOCATED}: error: this autograd.Function's "
        f"forward(ctx, ...) calls ctx.{what}, which the compiled step cannot "
        "trace in that form: define it with a separate setup_context "
        "(forward(*args) and setup_context(ctx, inputs, output))",
        code="autograd-function-form")


def _split(user):
    """The forward and setup_context of the user's forward(ctx, *args)
    (no default arguments: torch binds the forward's defaults). The forward
    runs once; torch calls setup_context after it, once per level of
    torch.func's transforms, before any other forward of this Function
    (a nested Function's calls complete inside the user's forward), each
    time with what that run recorded."""
    last = [None]

    def forward(*args):
        ctx = _Recording()
        output = user(ctx, *args)
        last[0] = ctx
        return output

    def setup_context(ctx, inputs, output):
        last[0].replay(ctx)

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
