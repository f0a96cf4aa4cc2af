"""Refusing a step whose forward writes into one of its arguments in place.

Functionalization turns a write into a parameter, a buffer or an input of
the step (nn.Embedding(max_norm=...) renormalizing the rows it looks up,
p.data.clamp_() in a forward, x.add_() of an input) into an out-of-place
operation and a copy into the argument appended to the graph
(aten.copy_ of a placeholder). The compiled step writes the parameters only
with the optimizer's update and never writes its inputs, and torch-mlir does
not lower such a copy: the write is refused at the line that makes it.
"""

from ._common import CompileError
from ._locations import UNLOCATED, _innermost_user_line


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
            "before each call)")
