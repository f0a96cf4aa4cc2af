"""Metrics beside the loss: `loss_fn` may return `(loss, metrics)`.

`metrics` is a tensor, or a dict, tuple or list of them (nested, in any
mix; None stays None). The compiled step returns the loss and the
metrics in the same structure, with the values PyTorch computes for the
whole batch. Nothing here decides how a metric is combined over
micro-batches: each metric tensor is one more result of `@train_step`, and
--ga-accumulate treats it by the same rule as the loss, read off the IR by
its batch analysis: a sum or a mean over the batch is accumulated across
micro-batches (a mean over all B samples, also with a remainder), a max or
min is combined with max or min, a per-sample tensor is assembled from the
micro-batches' rows, and a value that the analysis cannot prove to be one of
these (a metric of a batch-normalized quantity, a sort over the batch) is
refused at the line of the model that computes it.

Needs torch only (a saved step's layout rebuilds it).
"""

import inspect
import json

import torch
from torch.utils import _pytree as pytree

from ._common import CompileError


def _where(loss_fn):
    """file:line of `loss_fn`'s definition (its forward's, for a module),
    or the step's place-holder when Python does not know it."""
    from ._locations import UNLOCATED
    fn = loss_fn.forward if isinstance(loss_fn, torch.nn.Module) else loss_fn
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else UNLOCATED


def _what(value):
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {list(value.shape)}"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def split_result(value, loss_fn):
    """(loss, the metric tensors in order, their structure: a pytree
    TreeSpec and the positions of its None leaves, or None when loss_fn
    returned the loss alone) of the value `loss_fn` returned; CompileError
    for another form."""
    if isinstance(value, torch.Tensor) and value.dim() == 0:
        return value, [], None
    if isinstance(value, (tuple, list)) and len(value) == 2 and \
            isinstance(value[0], torch.Tensor) and value[0].dim() == 0:
        leaves, structure = pytree.tree_flatten(value[1])
        for path, leaf in pytree.tree_flatten_with_path(value[1])[0]:
            if leaf is not None and not isinstance(leaf, torch.Tensor):
                raise CompileError(
                    f"{_where(loss_fn)}: error: loss_fn returns "
                    f"{_what(leaf)} as metrics{pytree.keystr(path)}: the "
                    "compiled step returns "
                    "tensors only (computed for the whole batch); return "
                    "it as a tensor (torch.tensor(v) of a constant), or "
                    "compute a Python value from the step's result",
                    code="loss-fn-result")
        nones = [i for i, leaf in enumerate(leaves) if leaf is None]
        return value[0], [t for t in leaves if t is not None], \
            (structure, nones)
    what = f"a {type(value).__name__} of {len(value)}" if isinstance(
        value, (tuple, list)) else _what(value)
    raise CompileError(
        f"{_where(loss_fn)}: error: loss_fn must return the loss of the "
        "whole batch (a 0-d tensor), or (loss, metrics) with metrics a "
        f"tensor or a dict, tuple or list of tensors; it returns {what}",
        code="loss-fn-result")


class Metrics:
    """The metrics of a step: their structure (None: loss_fn returns the
    loss alone), the (shape, dtype) of each metric tensor, and where each
    comes from among the step's last results (the loss, then the metric
    results): `sources[0]` for the loss (0), `sources[1 + k]` for metric k.
    A metric that is the loss itself, or another metric, after torch-mlir's
    simplifications (`return loss, {"loss": loss}`, the same mean written
    twice) is one result of the step, not two (see distinct_results)."""

    def __init__(self, structure=None, types=(), sources=None, nones=()):
        self.structure = structure
        self.nones = list(nones)  # the positions of None leaves
        self.types = [(tuple(s), d) for s, d in types]
        self.sources = list(sources) if sources is not None else \
            list(range(1 + len(self.types)))

    @classmethod
    def of(cls, leaves, structure):
        """From split_result's metric tensors and structure."""
        if structure is None:
            return cls()
        return cls(structure[0], [(t.shape, t.dtype) for t in leaves],
                   nones=structure[1])

    def __len__(self):
        """The number of the step's results after the loss."""
        return max(self.sources)

    def results(self):
        """(shape, dtype) of the step's results after the loss."""
        first = {}
        for k, source in enumerate(self.sources[1:]):
            first.setdefault(source, self.types[k])
        return [first[j] for j in range(1, len(self) + 1)]

    def pack(self, loss, values):
        """What the step returns, from the loss and the step's results
        after it (`values`): the loss, or (loss, metrics) in the structure
        loss_fn returned them."""
        if self.structure is None:
            return loss
        last = [loss, *values]
        leaves = [last[j] for j in self.sources[1:]]
        for i in self.nones:
            leaves.insert(i, None)
        return loss, pytree.tree_unflatten(leaves, self.structure)

    def distinct_results(self, module, first):
        """Makes the results of @train_step (in `module`, torch-mlir's
        linalg-on-tensors import) from `first` on (the loss, the metrics)
        distinct values: a value returned twice is returned once, and
        `sources` says which result carries each metric. (Bufferization
        gives each result its own out-parameter, and cannot give one buffer
        two.)"""
        from torch_mlir import ir
        func = next(op for op in module.body.operations
                    if op.operation.name == "func.func" and
                    ir.StringAttr(op.attributes["sym_name"]).value ==
                    "train_step")
        block = func.regions[0].blocks[0]
        ret = list(block.operations)[-1]
        operands = list(ret.operands)
        kept, sources = [], []
        for value in operands[first:]:
            index = next((j for j, v in enumerate(kept) if v == value), None)
            if index is None:
                index = len(kept)
                kept.append(value)
            sources.append(index)
        self.sources = sources
        if len(kept) == len(operands) - first:
            return
        results = operands[:first] + kept
        with module.context, ret.location:
            ir.Operation.create("func.return", operands=results,
                                ip=ir.InsertionPoint(ret))
            ret.erase()
            old = ir.FunctionType(
                ir.TypeAttr(func.attributes["function_type"]).value)
            func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(old.inputs, [v.type for v in results]))
            if "res_attrs" in func.attributes:
                attrs = list(ir.ArrayAttr(func.attributes["res_attrs"]))
                kept_attrs = attrs[:first] + [
                    attrs[first + sources.index(j)]
                    for j in range(len(kept))]
                func.attributes["res_attrs"] = ir.ArrayAttr.get(kept_attrs)

    def to_json(self):
        """The metrics as a saved step's signature records them."""
        if self.structure is None:
            return None
        return {"structure": pytree.treespec_dumps(self.structure),
                "types": [[list(s), str(d).replace("torch.", "")]
                          for s, d in self.types],
                "sources": self.sources, "nones": self.nones}

    @classmethod
    def from_json(cls, data):
        if data is None:
            return cls()
        types = []
        for shape, name in data["types"]:
            dtype = getattr(torch, name, None)
            if not isinstance(dtype, torch.dtype):
                raise CompileError(f"unknown dtype '{name}' of a metric in "
                                   "a saved step",
                                   code="saved-step-format")
            types.append((shape, dtype))
        return cls(pytree.treespec_loads(data["structure"]), types,
                   data["sources"], data.get("nones", ()))

    def __eq__(self, other):
        return isinstance(other, Metrics) and \
            json.dumps(self.to_json()) == json.dumps(other.to_json())


def scalar_metrics(metrics):
    """{name: float} of the 0-d tensors of `metrics` (a step's or loss_fn's
    metrics structure), named by their path ("accuracy", "stats.0",
    "aux.balance"; "metric" for a tensor alone): what the analytics log
    beside the loss."""
    named = {}
    for path, leaf in pytree.tree_flatten_with_path(metrics)[0]:
        if isinstance(leaf, torch.Tensor) and leaf.dim() == 0:
            name = ".".join(str(getattr(key, "key", getattr(
                key, "idx", getattr(key, "name", key)))) for key in path)
            named[name or "metric"] = float(leaf.detach())
    return named
