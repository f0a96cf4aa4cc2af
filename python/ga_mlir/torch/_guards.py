"""The size of a selection by a boolean mask read in Python, and the guards
that comparisons of it become.

`label_index = (labels >= 0).nonzero()` then `if label_index.size(0) > 0:`
(DeBERTa-v2's sequence-classification loss): the selection is computed as
the full rows with a mask (_masked), and its size, read in Python, is a
SelectionSize: an int whose value is the full rows' count, remembered with
the selection's mask. Used as a size of a selection by the same mask
(`label_index.expand(label_index.size(0), d)`, `.view(n)`) it means the
selection's own rows (the full rows, the mask applied at the reduction).
Compared in Python (`> 0`, `== 0`, `bool()`), the comparison is a Guard: a
predicate on the number of selected elements of the whole batch, answered
with the example batch's value so that the trace takes that branch. The
guard is accepted only when the mask depends on the step's inputs alone:
the calls that computed it from the inputs (recorded while tracing,
_Recorder) are replayed in PyTorch on every batch before the compiled code
runs, and a batch whose guards answer otherwise gets a step traced for its
outcome (compile_train_step's variants). A mask computed from the model's
values is refused at the comparison's line; any other use of the size
(arithmetic, a value) is refused at its line.
"""

import contextlib
import operator

import torch
from torch.utils.weak import WeakTensorKeyDictionary

from ._common import CompileError
from ._locations import current_user_line

_USE = (
    "{where}: error: this line {what} the size of a selection by a boolean "
    "mask (x[mask], masked_select, torch.nonzero), which depends on the "
    "data: the compiled step computes the selection as the full tensor "
    "with the mask applied in a reduction; the size may only be the size "
    "of that selection (x.expand(x.size(0), d), x.view(n)) or be compared "
    "in a branch (`if x.size(0) > 0:`) when the mask depends on the step's "
    "inputs alone")

_RECORDING = None  # the _Recorder of the trace under way


@contextlib.contextmanager
def recording(example_inputs):
    """Guards recorded while the step is traced on `example_inputs` (the
    step function calls note_inputs with its traced inputs)."""
    global _RECORDING
    previous, _RECORDING = _RECORDING, _Recorder(example_inputs)
    try:
        yield _RECORDING.guards
    finally:
        _RECORDING = previous


def note_inputs(inputs):
    """The traced inputs of the step, in the order of the example inputs."""
    if _RECORDING is not None:
        _RECORDING.note_inputs(inputs)


def recorder():
    return _RECORDING


class _Ref:
    """A tensor of a replayed program: its step, or ("input", i)."""

    def __init__(self, k):
        self.k = k


class _Recorder:
    """The calls whose tensor operands all derive from the step's inputs
    (and Python constants) alone: a program that recomputes them."""

    def __init__(self, example_inputs):
        self.example_inputs = tuple(example_inputs)
        self.calls = WeakTensorKeyDictionary()  # tensor -> (func, args, kw)
        self.inputs = WeakTensorKeyDictionary()  # traced input -> index
        self.guards = []

    def note_inputs(self, inputs):
        for i, t in enumerate(inputs):
            self.inputs[t] = i

    def note(self, func, args, kwargs, out):
        """Records `out = func(*args, **kwargs)` when its tensor operands
        all derive from the inputs. A call that writes in place into such a
        tensor forgets everything recorded (a later replay from the inputs
        would miss the write): later guards are refused."""
        if not len(self.inputs):
            return
        tensors = _operands(args, kwargs)
        derived = [t in self.inputs or t in self.calls for t in tensors]
        if any(derived) and _writes(func, kwargs):
            self.inputs = WeakTensorKeyDictionary()
            self.calls = WeakTensorKeyDictionary()
        elif isinstance(out, torch.Tensor) and tensors and all(derived):
            self.calls[out] = (func, args, kwargs)

    def program(self, tensor):
        """The steps that compute `tensor` from the inputs, or None when it
        depends on anything else (parameters, the forward's values)."""
        steps, index = [], {}

        def ref(t):
            if t in self.inputs:
                return _Ref(("input", self.inputs[t]))
            if id(t) in index:
                return _Ref(index[id(t)])
            if t not in self.calls:
                raise LookupError
            func, args, kwargs = self.calls[t]
            args, kwargs = torch.utils._pytree.tree_map(
                lambda a: ref(a) if isinstance(a, torch.Tensor) else a,
                (args, kwargs))
            steps.append((func, args, kwargs))
            index[id(t)] = len(steps) - 1
            return _Ref(len(steps) - 1)

        try:
            return steps, ref(tensor)
        except LookupError:
            return None


def _operands(args, kwargs):
    """The tensors among the arguments (and in their lists)."""
    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out += [t for t in a if isinstance(t, torch.Tensor)]
    return out


# Python operators that write into their first operand besides the
# in-place methods (named with a trailing underscore).
_NOT_IN_PLACE = {"__init__", "__index__", "__int__", "__invert__",
                 "__iter__"}


def _writes(func, kwargs):
    """Whether the call may write into one of its operands."""
    name = getattr(func, "__name__", "")
    return (name.endswith("_") and not name.startswith("__")) or \
        name == "__setitem__" or (name.startswith("__i") and
                                  name not in _NOT_IN_PLACE) or \
        kwargs.get("out") is not None or bool(kwargs.get("inplace"))


def _run(program, inputs):
    steps, result = program
    values = []

    def value(a):
        if not isinstance(a, _Ref):
            return a
        k = a.k
        return inputs[k[1]] if isinstance(k, tuple) else values[k]

    for func, args, kwargs in steps:
        args, kwargs = torch.utils._pytree.tree_map(
            value, (args, kwargs), is_leaf=lambda a: isinstance(a, _Ref))
        values.append(func(*args, **kwargs))
    return value(result)


class Guard:
    """`op(count * factor, other)`, count: the number of elements the mask
    (computed by `program` from the inputs, then `count`) selects."""

    def __init__(self, program, count, factor, op, other, outcome, where):
        self.program, self.count, self.factor = program, count, factor
        self.op, self.other, self.outcome = op, other, outcome
        self.where = where

    def answer(self, inputs):
        """The comparison's value for the batch `inputs`."""
        with torch.no_grad():
            n = int(self.count(_run(self.program, inputs)))
        return self.op(n * self.factor, self.other)

    def holds(self, inputs):
        """Whether the guard answers for `inputs` as it did at the trace."""
        return self.answer(inputs) == self.outcome


def all_hold(guards, inputs):
    return all(g.holds(inputs) for g in guards)


_COMPARISONS = {"__gt__": operator.gt, "__ge__": operator.ge,
                "__lt__": operator.lt, "__le__": operator.le,
                "__eq__": operator.eq, "__ne__": operator.ne}


class SelectionSize(int):
    """The size of a selection read in Python (see the module's
    docstring): its value is the full rows' count (times `factor`, the
    elements of a row, for numel())."""

    def __new__(cls, value, mask, factor, source):
        self = super().__new__(cls, value)
        self.mask, self.factor, self.source = mask, factor, source
        return self

    __hash__ = int.__hash__

    def _compare(self, name, other):
        where = current_user_line()
        if isinstance(other, SelectionSize) or type(other) not in (int,
                                                                    bool):
            raise CompileError(_USE.format(where=where, what="compares"),
                               code="data-dependent-size")
        tensor, count = self.source
        rec = _RECORDING
        op = _COMPARISONS[name]
        if rec is None:
            # Run eagerly (not traced): PyTorch's own answer.
            return op(int(count(tensor)) * self.factor, other)
        program = rec.program(tensor)
        if program is None:
            raise CompileError(
                f"{where}: error: this line branches on the size of a "
                "selection by a boolean mask that is computed from the "
                "model's values (its parameters or its forward's results, "
                "or after a write in place into the step's inputs), which "
                "the compiled step, traced once for each outcome of such a "
                "branch, cannot know before it runs: branch only on masks "
                "of the step's inputs (labels >= 0), or keep the shape "
                "fixed (torch.where with the mask)",
                code="data-dependent-size")
        from torch.fx.experimental.proxy_tensor import \
            disable_proxy_modes_tracing
        with disable_proxy_modes_tracing(), torch.no_grad():
            n = int(count(_run(program, rec.example_inputs)))
        outcome = op(n * self.factor, other)
        rec.guards.append(Guard(program, count, self.factor, op, other,
                                outcome, where))
        return outcome

    def __bool__(self):
        return self._compare("__ne__", 0)

    def _refused(self, *args):
        raise CompileError(_USE.format(where=current_user_line(),
                                       what="computes with"),
                           code="data-dependent-size")


for _name in _COMPARISONS:
    setattr(SelectionSize, _name,
            lambda self, other, _n=_name: self._compare(_n, other))
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
              "divmod", "and", "or", "xor", "lshift", "rshift"):
    setattr(SelectionSize, f"__{_name}__", SelectionSize._refused)
    setattr(SelectionSize, f"__r{_name}__", SelectionSize._refused)
for _name in ("__neg__", "__pos__", "__abs__", "__float__", "__int__",
              "__invert__", "__round__", "__trunc__", "__floor__",
              "__ceil__"):
    setattr(SelectionSize, _name, SelectionSize._refused)
