"""Python numbers read from tensors, kept as tensors in the optimizer's step.

A torch.optim step may read a number from a tensor and compute with it in
Python: Adafactor's `step_t.item()`, `param.norm(2).item()`, then
`min(lr, 1 / step ** 0.5)` and `max(1.0, ...)`. A step traced once for
every call cannot read a value, but it can keep it: while the optimizer's
step runs (`numbers_as_tensors`, only there, never in the forward),

* `Tensor.item()` returns the tensor as a 0-d tensor of the trace, a float
  in float64: the Python float that item() returns holds the tensor's value
  exactly, and the Python arithmetic that follows is float64's, so the
  traced arithmetic rounds as PyTorch's Python floats do (as the float64
  hyper-parameter arguments of _optimizers). An integer stays int64, a bool
  a bool.
* the builtins `float`, `max` and `min`, as the modules of the class's
  step() see them (names inserted into those modules' globals, removed
  afterwards), take the tensor path when an argument is a tensor of one
  element (a number):
  `float(t)` as `t.item()`, `max`/`min` as torch.maximum/torch.minimum
  over the arguments at their promoted dtype (a Python number as the
  tensor's dtype takes it). Without a tensor argument they are the
  builtins.

A Python branch on such a value (`if x > 0:`, bool()) still needs the value:
make_fx refuses it, and _optimizers._probe reports the optimizer's line.
"""

import builtins
import contextlib
import functools
import inspect
import sys

import torch


def item(t):
    """`t.item()` as a 0-d tensor: float64 for a float, int64 for an integer
    (the Python number's precision), a bool as it is."""
    t = t.detach().reshape(())
    if t.is_floating_point():
        return t.to(torch.float64)
    if t.dtype == torch.bool or t.is_complex():
        return t.clone()
    return t.to(torch.int64)


def composite_in_place(func):
    """For a Tensor method that updates its tensor in place and that PyTorch
    implements as a composite of other operations (Adafactor's
    `.square_()`), which functionalization refuses ("a custom (non-ATen)
    operator whose output has alias annotations"): the same update as its
    out-of-place form copied into the tensor. Else None."""
    name = getattr(func, "__name__", "")
    if not name.endswith("_") or name.startswith("_") or \
            getattr(torch.Tensor, name, None) is not func or \
            not hasattr(torch.Tensor, name[:-1]):
        return None
    try:
        composite = torch._C._dispatch_has_kernel_for_dispatch_key(
            "aten::" + name, "CompositeImplicitAutograd")
    except RuntimeError:
        return None
    if not composite:
        return None
    out_of_place = getattr(torch.Tensor, name[:-1])
    return lambda self, *args, **kwargs: self.copy_(
        out_of_place(self, *args, **kwargs))


class _FloatType(type):
    """`float` as the step's modules see it: a tensor's value as item() keeps
    it; else, and for isinstance/issubclass, the builtin."""

    def __call__(cls, x=0.0):
        if isinstance(x, torch.Tensor):
            return item(x).to(torch.float64)
        return builtins.float(x)

    def __instancecheck__(cls, x):
        return isinstance(x, builtins.float)

    def __subclasscheck__(cls, c):
        return issubclass(c, builtins.float)


class _float(metaclass=_FloatType):
    pass


def _extremum(builtin, combine):
    """max or min: the builtin, or, with a tensor of one element among the
    values, their extremum at the dtype PyTorch's type promotion gives them
    (a Python number takes the tensor's dtype)."""

    @functools.wraps(builtin)
    def extremum(*args, **kwargs):
        values = args
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            values = args[0]
        tensors = [v for v in values if isinstance(v, torch.Tensor)]
        # Numbers only: of tensors of several elements, Python's max (bool
        # of a comparison) fails as in PyTorch.
        if kwargs or not tensors or any(t.numel() != 1 for t in tensors):
            return builtin(*args, **kwargs)
        dtype = None
        for v in values:  # a Python number promotes only across categories
            if isinstance(v, torch.Tensor):
                dtype = v.dtype if dtype is None else \
                    torch.promote_types(dtype, v.dtype)
        for v in values:
            if not isinstance(v, torch.Tensor):
                dtype = torch.result_type(torch.zeros((), dtype=dtype), v)
        tensors = [v.to(dtype) if isinstance(v, torch.Tensor)
                   else torch.tensor(v, dtype=dtype) for v in values]
        return functools.reduce(combine, tensors)
    return extremum


_BUILTINS = {"float": _float,
             "max": _extremum(builtins.max, torch.maximum),
             "min": _extremum(builtins.min, torch.minimum)}


def _step_modules(cls):
    """The modules whose code runs the step of `cls`: those that define
    step() along its class hierarchy (and the functional it calls there,
    torch.optim's own modules define both)."""
    out = []
    for klass in cls.__mro__:
        if "step" in vars(klass) or klass is cls:
            module = sys.modules.get(klass.__module__)
            if module is not None and module not in out and \
                    module.__name__ != "torch.optim.optimizer":
                out.append(module)
    step = inspect.unwrap(cls.step)
    module = inspect.getmodule(step)
    if module is not None and module not in out:
        out.append(module)
    return out


@contextlib.contextmanager
def builtins_as_tensors(cls):
    """float/max/min in the globals of the modules that run `cls`'s step
    (see the module's docstring), restored afterwards."""
    saved = []
    for module in _step_modules(cls):
        for name, fn in _BUILTINS.items():
            saved.append((module, name, module.__dict__.get(name, _MISSING)))
            module.__dict__[name] = fn
    try:
        yield
    finally:
        for module, name, old in reversed(saved):
            if old is _MISSING:
                module.__dict__.pop(name, None)
            else:
                module.__dict__[name] = old


_MISSING = object()
