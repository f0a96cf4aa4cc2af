"""The grouped products of mixture-of-experts layers as operations of the
trace.

transformers' experts (Mixtral, Qwen3-MoE, OLMoE, ...: the default
`experts_implementation="grouped_mm"`) sort the token-expert pairs by
expert and multiply each expert's rows by its weights in one grouped
product: rows [offs[g - 1], offs[g]) of the input times weight[g], the
offsets computed from the batch's routing (a histogram of the experts
chosen). Under tracing transformers believes it is being compiled and, for
float32 weights, calls its own custom op `transformers::grouped_mm_fallback`
(else `torch._grouped_mm`). Neither traces under torch.func.grad here: the
custom op's autograd (torch.library.register_autograd) is an
autograd.Function that functorch's transforms refuse, and
torch._grouped_mm runs its CPU kernel on the example batch (16-byte
strides required).

ExpertProducts (a TorchFunctionMode of the trace) records both as

  out = ga_mlir::grouped_mm(input, weight, offs)              [S, N]
  d_input = ga_mlir::grouped_mm(d_out, weight^T, offs)        its backward
  d_weight = ga_mlir::grouped_mm_weight_grad(input, d_out, offs)  [E, K, N]

(an autograd.Function with setup_context, which torch.func.grad takes, as
_recurrence does for the time loops). Shapes are static (S rows in all,
E groups); only the offsets are data, so the trace does not specialize on
the example batch's routing: a batch in which an expert receives no token
runs the same graph. Rows past offs[-1] are zero (transformers' fallback).
The work is proportional to the rows S = T * k: each row is multiplied by
its own group's weight only.

_rolled imports each of them as one ga.grouped_matmul (the weights'
gradient with transpose_lhs), whose batch model (lib/Analysis/
BatchGrouped.cpp) takes rows that are per-sample in order and whose CPU
lowering is a product per group. transformers' sort of the pairs across
the batch, undone before the sum over each token's experts, is left out of
the trace by the permutation rule (_permutation.py): the product of rows
sorted by that sort and ends counted from it is traced as

  out = ga_mlir::grouped_mm_rows(input, weight, ids)         [S, N]

on the rows in token order, each row times the matrix of its own group
(ga.grouped_matmul group_ids). For target="cuda" the GPU pipeline
decomposes it into generated kernels (--ga-decompose-grouped-gather).
"""

import contextlib
import unittest.mock

import torch
from torch.overrides import TorchFunctionMode

from . import _expert_loop, _permutation
from ._common import CompileError
from ._locations import UNLOCATED, _innermost_user_line, current_user_line

_LIB = torch.library.Library("ga_mlir", "FRAGMENT")
_LIB.define("grouped_mm(Tensor input, Tensor weight, Tensor offs) -> Tensor")
_LIB.define("grouped_mm_weight_grad(Tensor input, Tensor grad, Tensor offs, "
            "int groups) -> Tensor")
_LIB.define("grouped_mm_rows(Tensor input, Tensor weight, Tensor ids) -> "
            "Tensor")
_LIB.define("grouped_mm_rows_weight_grad(Tensor input, Tensor grad, "
            "Tensor ids, int groups) -> Tensor")


def _groups(offs):
    """(group, first row, end row) of each non-empty group of `offs`."""
    start = 0
    for g, end in enumerate(offs.tolist()):
        if end > start:
            yield g, start, end
        start = max(start, end)


def _grouped_mm(input, weight, offs):
    """Rows [offs[g - 1], offs[g]) of `input` [S, K] times weight[g] [K, N];
    rows past offs[-1] zero."""
    out = input.new_zeros((input.shape[0], weight.shape[-1]))
    for g, start, end in _groups(offs):
        out[start:end] = input[start:end] @ weight[g]
    return out


def _grouped_mm_meta(input, weight, offs):
    return input.new_empty((input.shape[0], weight.shape[-1]))


def _grouped_mm_weight_grad(input, grad, offs, groups):
    """[groups, K, N]: input[rows of g]^T @ grad[rows of g] for each g
    (zero for a group without rows)."""
    out = input.new_zeros((groups, input.shape[1], grad.shape[1]))
    for g, start, end in _groups(offs):
        out[g] = input[start:end].t() @ grad[start:end]
    return out


def _grouped_mm_weight_grad_meta(input, grad, offs, groups):
    return input.new_empty((groups, input.shape[1], grad.shape[1]))


def _grouped_mm_rows(input, weight, ids):
    """Row s of `input` [S, K] times weight[ids[s]] [K, N]; rows whose id
    is outside [0, E) zero."""
    out = input.new_zeros((input.shape[0], weight.shape[-1]))
    for g in range(weight.shape[0]):
        rows = ids == g
        out[rows] = input[rows] @ weight[g]
    return out


def _grouped_mm_rows_weight_grad(input, grad, ids, groups):
    """[groups, K, N]: the sum over the rows s of group g of
    input[s]^T grad[s]."""
    out = input.new_zeros((groups, input.shape[1], grad.shape[1]))
    for g in range(groups):
        rows = ids == g
        out[g] = input[rows].t() @ grad[rows]
    return out


_LIB.impl("grouped_mm", _grouped_mm, "CPU")
_LIB.impl("grouped_mm_rows", _grouped_mm_rows, "CPU")
_LIB.impl("grouped_mm_rows", _grouped_mm_meta, "Meta")
_LIB.impl("grouped_mm_rows_weight_grad", _grouped_mm_rows_weight_grad, "CPU")
_LIB.impl("grouped_mm_rows_weight_grad", _grouped_mm_weight_grad_meta,
          "Meta")
_LIB.impl("grouped_mm", _grouped_mm_meta, "Meta")
_LIB.impl("grouped_mm_weight_grad", _grouped_mm_weight_grad, "CPU")
_LIB.impl("grouped_mm_weight_grad", _grouped_mm_weight_grad_meta, "Meta")
GROUPED_MM = torch.ops.ga_mlir.grouped_mm.default
GROUPED_MM_WEIGHT_GRAD = torch.ops.ga_mlir.grouped_mm_weight_grad.default
GROUPED_MM_ROWS = torch.ops.ga_mlir.grouped_mm_rows.default
GROUPED_MM_ROWS_WEIGHT_GRAD = \
    torch.ops.ga_mlir.grouped_mm_rows_weight_grad.default
# The grouped products of a trace (_rolled imports each as one
# ga.grouped_matmul; the _ROWS ones with group_ids, the weights' gradients
# with transpose_lhs).
GROUPED = (GROUPED_MM, GROUPED_MM_WEIGHT_GRAD, GROUPED_MM_ROWS,
           GROUPED_MM_ROWS_WEIGHT_GRAD)
BY_ROWS = (GROUPED_MM_ROWS, GROUPED_MM_ROWS_WEIGHT_GRAD)
WEIGHT_GRADS = (GROUPED_MM_WEIGHT_GRAD, GROUPED_MM_ROWS_WEIGHT_GRAD)


def _grouped_function(name, product, weight_grad, doc):
    """A torch.autograd.Function of the grouped product `product`(input,
    weight, groups) whose backward is grouped products too: `product` of the
    gradient by the transposed weights, and `weight_grad` (setup_context:
    torch.func.grad takes it)."""

    def forward(input, weight, groups):
        return product(input, weight, groups)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        input, weight, groups = ctx.saved_tensors
        d_input = d_weight = None
        if ctx.needs_input_grad[0]:
            d_input = product(grad, weight.transpose(-2, -1), groups)
        if ctx.needs_input_grad[1]:
            d_weight = weight_grad(input, grad, groups, weight.shape[0])
        return d_input, d_weight, None

    return type(name, (torch.autograd.Function,),
                {"__doc__": doc, "forward": staticmethod(forward),
                 "setup_context": staticmethod(setup_context),
                 "backward": staticmethod(backward)})


# grouped_mm by group ends, grouped_mm_rows by the rows' group ids.
_GroupedProduct = _grouped_function(
    "_GroupedProduct", GROUPED_MM, GROUPED_MM_WEIGHT_GRAD,
    "grouped_mm with its backward in grouped products")
_RowsProduct = _grouped_function(
    "_RowsProduct", GROUPED_MM_ROWS, GROUPED_MM_ROWS_WEIGHT_GRAD,
    "grouped_mm_rows with its backward in grouped products by rows")


def grouped_product(input, weight, offs):
    """The traced grouped product of `input` [S, K] and `weight` [E, K, N]
    by the group ends `offs` [E]."""
    if input.dim() != 2 or weight.dim() != 3 or offs.dim() != 1 or \
            offs.shape[0] != weight.shape[0] or \
            input.shape[1] != weight.shape[1]:
        raise CompileError(
            f"{current_user_line()}: error: a grouped product of rows of "
            "a [S, K] input by [E, K, N] weights with E group ends was "
            "expected, not "
            f"{tuple(input.shape)} by {tuple(weight.shape)} with "
            f"{tuple(offs.shape)} ends",
            code="unsupported-operation")
    if _COUNT is not None:
        _COUNT[0] += 1
    ids = _permutation.sorted_product(input, weight, offs)
    if ids is not None:
        # Sorted rows traced in the original order: each row by its group.
        return _permutation.mark_sorted(
            _RowsProduct.apply(input, weight, ids), input)
    return _GroupedProduct.apply(input, weight, offs)


def rows_product(input, weight, ids):
    """The traced product of each row of `input` [S, K] by the matrix
    weight[ids[s]] of its own group (weight [E, K, N]): the expert loop
    rule's products (_expert_loop.py)."""
    if _COUNT is not None:
        _COUNT[0] += 1
    return _RowsProduct.apply(input, weight, ids)


@contextlib.contextmanager
def counting():
    """Counts the grouped products traced inside (a one-element list): the
    forward's eager run under _tracing tells the trace whether it must
    functionalize after tracing (see _export._trace), since the products
    are an autograd.Function that functionalize has no rule for."""
    global _COUNT
    outer, _COUNT = _COUNT, [0]
    try:
        yield _COUNT
    finally:
        _COUNT = outer


_COUNT = None


def _fallbacks():
    """transformers' grouped-product custom op (its packet and overload), if
    transformers registered it."""
    try:
        packet = torch.ops.transformers.grouped_mm_fallback
    except (AttributeError, RuntimeError):
        return ()
    return (packet, packet.default)


class ExpertProducts(TorchFunctionMode):
    """Traces transformers' grouped_mm_fallback and torch._grouped_mm
    (torch.nn.functional.grouped_mm) of a [S, K] input by [E, K, N] weights
    with offsets and nothing else (no bias, no out_dtype) as
    grouped_product; applies the permutation rule (_permutation.py) and
    the expert loop rule (_expert_loop.py, whose one-hots it tags: it wraps
    F.one_hot while it is active)."""

    def __init__(self):
        super().__init__()
        self.fallbacks = _fallbacks()
        self.permutations = _permutation.Permutations()
        self.loops = _expert_loop.ExpertLoops(rows_product)
        self.one_hot = None

    def __enter__(self):
        self.one_hot = unittest.mock.patch.object(
            torch.nn.functional, "one_hot",
            self.loops.one_hot(torch.nn.functional.one_hot))
        self.one_hot.start()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self.one_hot.stop()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in self.fallbacks and func not in _GROUPED_MM_FUNCTIONS:
            result = self.loops.handle(func, args, kwargs)
            if result is not NotImplemented:
                return result
            result = self.permutations.handle(func, args, kwargs)
            if result is not NotImplemented:
                return result
        if func in self.fallbacks:
            input, weight = args[0], args[1]
            offs = kwargs.get("offs", args[2] if len(args) > 2 else None)
            return grouped_product(input, weight, offs)
        if func in _GROUPED_MM_FUNCTIONS and len(args) == 2 and \
                set(kwargs) <= {"offs", "bias", "out_dtype"} and \
                kwargs.get("offs") is not None and \
                kwargs.get("bias") is None and \
                kwargs.get("out_dtype") is None and args[0].dim() == 2 and \
                args[1].dim() == 3:
            return grouped_product(args[0], args[1], kwargs["offs"])
        return func(*args, **kwargs)


_GROUPED_MM_FUNCTIONS = tuple(
    f for f in (getattr(torch, "_grouped_mm", None),
                getattr(torch.nn.functional, "grouped_mm", None))
    if f is not None)


def grouped_lines(graph):
    """The user's lines of the grouped products of `graph`, in order."""
    lines = []
    for node in graph.nodes:
        if node.op == "call_function" and node.target in GROUPED:
            where = _innermost_user_line(node.meta.get("stack_trace"))
            if where not in lines:
                lines.append(where)
    return lines


def refuse_untraced(graph):
    """CompileError at its line for a grouped product of aten that the
    trace did not record as one of ours (ExpertProducts did not see it)."""
    for node in graph.nodes:
        if node.op == "call_function" and \
                str(node.target).startswith("aten._grouped_mm"):
            where = _innermost_user_line(node.meta.get("stack_trace"))
            raise CompileError(
                f"{where or UNLOCATED}: error: a grouped product "
                "(torch._grouped_mm) with a bias, an out_dtype or operands "
                "other than [S, K] rows by [E, K, N] weights is not compiled",
                code="unsupported-operation")
