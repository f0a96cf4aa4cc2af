"""Refusing a step whose forward writes into one of its arguments in place.

Functionalization turns a write into a parameter, a buffer or an input of
the step (nn.Embedding(max_norm=...) renormalizing the rows it looks up,
p.data.clamp_() in a forward, x.add_() of an input) into an out-of-place
operation and a copy into the argument appended to the graph
(aten.copy_ of a placeholder). The compiled step writes the parameters only
with the optimizer's update and never writes its inputs, and torch-mlir does
not lower such a copy: the write is refused at the line that makes it.
A buffer that the eager probe saw change (other than BatchNorm's running
statistics) is refused before tracing, at the line of its first write, found
by running the forward again under a dispatch mode that records writes.
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ._common import CompileError
from ._locations import UNLOCATED, _innermost_user_line, current_user_line


class _WriteRecorder(TorchDispatchMode):
    """Records, for each tensor of `watched` ({storage pointer: name}) that
    an operation writes in place, the user's line of the first write."""

    def __init__(self, watched):
        super().__init__()
        self.watched, self.lines = watched, {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = func._schema
        for i, argument in enumerate(schema.arguments):
            if argument.alias_info is None or \
                    not argument.alias_info.is_write:
                continue
            value = args[i] if i < len(args) else kwargs.get(argument.name)
            if isinstance(value, torch.Tensor) and value.numel():
                name = self.watched.get(value.untyped_storage().data_ptr())
                if name is not None and name not in self.lines:
                    self.lines[name] = current_user_line()
        return func(*args, **kwargs)


def refuse_buffer_writes(model, loss_fn, inputs, names):
    """CompileError at the user's line of the forward's first in-place write
    into one of the buffers `names` (found by running loss_fn once more
    under a recorder; the buffers and the random number generator are
    restored)."""
    buffers = dict(model.named_buffers())
    saved = {n: buffers[n].detach().clone() for n in names}
    watched = {buffers[n].untyped_storage().data_ptr(): n for n in names
               if buffers[n].numel()}
    recorder = _WriteRecorder(watched)
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad(), recorder:
            loss_fn(model, *inputs)
    except Exception:  # the refusal below says what is known
        pass
    finally:
        with torch.no_grad():
            for n, value in saved.items():
                buffers[n].copy_(value)
    where = next(iter(recorder.lines.values()), UNLOCATED)
    raise CompileError(
        f"{where}: error: the forward updates the buffers "
        f"{', '.join(sorted(names))} in place, which the traced step would "
        "lose: only BatchNorm's running statistics are carried as results "
        "of the step; compute the new value out of place and keep it "
        "outside the step",
        code="in-place-write")
def _argument_names(model):
    """{data_ptr: what} of the model's parameters and buffers."""
    names = {}
    for n, b in model.named_buffers():
        names[b.data_ptr()] = f"the buffer '{n}'"
    for n, p in model.named_parameters():
        names[p.data_ptr()] = f"the parameter '{n}'"
    return names


def refuse_argument_writes(graph, flat, model):
    """CompileError at the model's line for a copy into an argument of the
    traced step (`graph`, traced on the tensors `flat`, one per placeholder
    in order)."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node in graph.nodes:
        if node.op != "call_function" or \
                str(node.target) != "aten.copy_.default" or \
                node.args[0] not in placeholders:
            continue
        index = placeholders.index(node.args[0])
        tensor = flat[index] if index < len(flat) else None
        what = _argument_names(model).get(
            tensor.data_ptr() if tensor is not None and tensor.numel()
            else None, "an input of the step")
        where = _innermost_user_line(node.meta.get("stack_trace"))
        raise CompileError(
            f"{where or UNLOCATED}: error: this line writes into {what} in "
            "place (nn.Embedding(max_norm=...) renormalizes the rows that it "
            "looks up in its weight; p.data.clamp_(), x.add_() of an input), "
            "which the compiled step cannot: it writes the parameters only "
            "with the optimizer's update and never writes its inputs; write "
            "out of place (y = x * 2, not x.mul_(2)), or renormalize "
            "outside the step (nn.Embedding(max_norm=None), and "
            "torch.embedding_renorm_ of the weight under torch.no_grad() "
            "before each call)",
            code="in-place-write")
