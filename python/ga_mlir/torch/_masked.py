"""Selections with a data-dependent size whose only use is a reduction, as
masked reductions over the static full size.

`x[mask].mean()`, `F.cross_entropy(logits[mask], labels[mask])`: the
selection's size (the number of true elements) depends on the data, which
a step traced once for every batch cannot have. While the step is traced
(MaskedRows, a TorchFunctionMode), `x[mask]` with a boolean mask over the
leading dimensions of x, and `torch.masked_select`, give x itself with the
mask's dimensions flattened into one (the rows), and remember the mask:
row i is selected where mask[i] holds (`torch.nonzero(x)` and argwhere:
the coordinates of every element, selected where x is not zero). Such a
value may then go through operations that PyTorch's own operators declare
element-wise
(torch.Tag.pointwise: each row's result depends on that row alone), with
operands that are selections by the same mask or that do not reach the
rows (broadcast along the other dimensions), or along dimensions other
than the rows' (log_softmax(x[mask], -1), x[mask].sum(1), declared by the
op's `dim` argument), or a product with a matrix (a linear layer), and ends
in a reduction over
the selection, computed over the full rows with the mask applied:

- sum() (and sum(0)): the sum of where(mask, x, 0): 0 when nothing is
  selected, as PyTorch's sum of an empty tensor;
- mean() (and mean(0)): that sum divided by the number of selected elements:
  0 / 0 = nan when nothing is selected, as PyTorch's mean of an empty
  tensor (its gradient is zero there, as PyTorch's);
- the losses of torch.nn.functional with reduction "mean" or "sum"
  (cross_entropy and nll_loss with class targets, ignore_index and class
  weights; mse_loss, l1_loss, smooth_l1_loss, huber_loss,
  binary_cross_entropy(_with_logits)): the unreduced loss of every row,
  reduced as above (cross-entropy's mean divides by the selected targets'
  weight, as PyTorch's).

The gradient follows from these forms (the backward of where). A
torch.gather along the rows with a selection as the index gives a
selection too (at the rows' own positions, DeBERTa-v2's
`gather(logits, 0, label_index.expand(...))`, x itself). Reading the size
(x[mask].shape[0], size(0), numel()) gives a SelectionSize (_guards): the
selection's own size, or a guard when compared in a branch. Anything else
on a selection is refused at the user's line (len(), arithmetic with its
size: the full rows have another size than the selection).
"""

import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakTensorKeyDictionary

from . import _guards
from ._common import CompileError
from ._guards import SelectionSize
from ._locations import current_user_line

aten = torch.ops.aten

_REFUSAL = (
    "{what}: a selection by a boolean mask (x[mask], masked_select, "
    "torch.nonzero) has a size that depends on the data, which the "
    "compiled step computes as the full tensor with the mask applied in a "
    "reduction: it may go only through element-wise operations into "
    "sum(), mean() or a loss of torch.nn.functional (reduction 'mean' or "
    "'sum'); reduce it so, or keep the shape fixed (torch.where with the "
    "mask, or multiply by it)")

# What reading the size of a selection means for the step.
_SIZE_READ = (
    "this line reads the size of a selection by a boolean mask "
    "(x[mask].shape[0], len(), numel(), or a branch on it such as `if "
    "x.size(0) > 0:`, which the step, traced once for every batch, would "
    "take the same way for every batch)")

# Size reads of a selection: a SelectionSize (_guards) for the rows'
# dimension; len() is refused (Python makes its result a plain int).
_SIZE_READS = [torch.Tensor.size, torch.Tensor.numel, torch.Tensor.nelement,
               torch.numel, torch.Tensor.shape.__get__]
_LEN = [torch.Tensor.__len__]

# Views whose result keeps the rows when its first dimension is the rows'.
_VIEWS = {aten.view.default, aten._unsafe_view.default,
          aten.reshape.default, aten.expand.default}

# Operations that only describe a tensor (no new value): passed through.
_DESCRIPTIONS = [torch.Tensor.dim, torch.Tensor.ndim.__get__,
                 torch.Tensor.dtype.__get__, torch.Tensor.device.__get__,
                 torch.Tensor.is_floating_point, torch.Tensor.requires_grad
                 .__get__, torch.Tensor.is_complex, torch.Tensor.__format__,
                 torch.Tensor.grad_fn.__get__, torch.Tensor.layout.__get__]


def _among(func, funcs):
    """Whether func is one of funcs (property getters are new objects at
    every access: compared by equality)."""
    return any(func == f for f in funcs)

# ATen ops that keep each row's values apart besides the pointwise ones:
# copies and conversions.
_ROW_PRESERVING = {aten._to_copy.default, aten.clone.default,
                   aten.alias.default, aten.detach.default,
                   aten.lift_fresh.default}

# Products whose first operand's rows stay apart when the others are
# matrices or vectors.
_PRODUCTS = {F.linear, torch.matmul, torch.Tensor.matmul,
             torch.Tensor.__matmul__, torch.mm, torch.Tensor.mm}

# Calls whose result keeps each row's values (a row-keeping view, a
# conversion): an index of the rows' own positions stays one.
_OWN_KEEPING = {torch.Tensor.view, torch.Tensor.reshape, torch.reshape,
                torch.Tensor.expand, torch.Tensor.expand_as,
                torch.Tensor.long, torch.Tensor.contiguous, torch.Tensor.to}

_ELEMENTWISE_LOSSES = {F.mse_loss, F.l1_loss, F.smooth_l1_loss,
                       F.huber_loss, F.binary_cross_entropy,
                       F.binary_cross_entropy_with_logits}


class _Ops(TorchDispatchMode):
    """Whether every ATen op that a call dispatches (passed through) keeps
    the rows apart (_keeps_rows)."""

    def __init__(self):
        super().__init__()
        self.rowwise = True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.rowwise &= _keeps_rows(func, args, kwargs) or (
            func in _VIEWS and isinstance(out, torch.Tensor) and
            out.dim() >= 1 and args[0].dim() >= 1 and
            out.shape[0] == args[0].shape[0])
        return out


def _keeps_rows(op, args, kwargs):
    """Whether the ATen op computes each row of its result from that row of
    its operands alone, as the op declares it: element-wise
    (torch.Tag.pointwise), a copy, or an op along dimensions (its `dim` or
    `dims` argument) that do not include the first, the rows'."""
    if torch.Tag.pointwise in op.tags or op in _ROW_PRESERVING:
        return True
    names = [a.name for a in op._schema.arguments]
    bound = dict(zip(names, args), **kwargs)
    dims = bound.get("dim", bound.get("dims"))
    first = bound.get(names[0]) if names else None
    if isinstance(first, (list, tuple)) and first:
        first = first[0]  # cat, stack: the first of the tensors
    if dims is None or not isinstance(first, torch.Tensor) or \
            first.dim() == 0:
        return False  # no dimension, or all of them
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    return bool(dims) and all(isinstance(d, int) and d % first.dim() != 0
                              for d in dims)


def _tensors(args, kwargs):
    out = []
    torch.utils._pytree.tree_map(
        lambda a: out.append(a) if isinstance(a, torch.Tensor) else None,
        (args, kwargs))
    return out


def _arg(args, kwargs, i, name, default):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


class MaskedRows(TorchFunctionMode):
    """The selections of the module's docstring while the step is traced."""

    def __init__(self):
        super().__init__()
        self.rows = WeakTensorKeyDictionary()  # tensor -> its rows' mask
        self.flat = WeakTensorKeyDictionary()  # mask -> flattened, once
        # flattened mask -> (the tensor it was computed from, its count)
        self.origin = WeakTensorKeyDictionary()
        self.sizes_read = False  # whether a SelectionSize may be in use
        # Selections whose every element in row i is i (the coordinates of
        # a 1-D tensor's nonzero elements, and their views): an index of
        # each row's own position.
        self.own = WeakTensorKeyDictionary()

    def _select(self, x, mask, origin=None):
        """x's rows (the mask's dimensions flattened), remembered with the
        flattened mask and its origin (a tensor, and the number of selected
        elements as a function of it; default: the mask, its sum)."""
        m = mask.dim()
        rows = x.reshape((-1, *x.shape[m:]))
        if rows is x:
            rows = x.view(x.shape)
        if mask not in self.flat:
            self.flat[mask] = mask.reshape(-1)
        self.rows[rows] = self.flat[mask]
        self.origin.setdefault(self.flat[mask], origin or (
            mask, lambda m: m.sum()))
        return rows

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.sizes_read:
            args, kwargs = self._sizes_used(func, args, kwargs)
        out = self._call(func, args, kwargs)
        rec = _guards.recorder()
        if rec is not None:
            rec.note(func, args, kwargs, out)
        return out

    def _sizes_used(self, func, args, kwargs):
        """The arguments with the sizes of selections (SelectionSize) used
        as sizes of a selection by the same mask as plain ints; refused
        elsewhere."""
        sizes = []
        torch.utils._pytree.tree_map(
            lambda a: sizes.append(a) if isinstance(a, SelectionSize)
            else None, (args, kwargs))
        if not sizes:
            return args, kwargs
        masks = {id(self.rows[t]) for t in _tensors(args, kwargs)
                 if t in self.rows}
        if len(masks) != 1 or any(id(s.mask) not in masks for s in sizes):
            raise CompileError(_guards._USE.format(
                where=current_user_line(), what="uses as a value"),
                               code="data-dependent-size")
        return torch.utils._pytree.tree_map(
            lambda a: int.__int__(a) if isinstance(a, SelectionSize) else a,
            (args, kwargs))

    def _size(self, func, args, mask):
        """A size read of a selection: SelectionSize for the rows'
        dimension."""
        x, origin = args[0], self.origin[mask]
        self.sizes_read = True
        if func == torch.Tensor.size and len(args) > 1:
            d = args[1] % x.dim()
            return SelectionSize(x.shape[0], mask, 1, origin) if d == 0 \
                else x.shape[d]
        if func in (torch.Tensor.numel, torch.Tensor.nelement, torch.numel):
            per_row = math.prod(x.shape[1:])
            return SelectionSize(x.numel(), mask, per_row, origin)
        return (SelectionSize(x.shape[0], mask, 1, origin),
                *x.shape[1:])

    def _call(self, func, args, kwargs):
        selections = [t for t in _tensors(args, kwargs) if t in self.rows] \
            if len(self.rows) else []
        if not selections:
            selected = self._selection(func, args, kwargs)
            return selected if selected is not None else \
                func(*args, **kwargs)
        if _among(func, _DESCRIPTIONS):
            return func(*args, **kwargs)
        where = current_user_line()
        masks = [self.rows[t] for t in selections]
        if _among(func, _LEN):
            raise CompileError(_REFUSAL.format(
                what=f"{where}: error: {_SIZE_READ}"),
                               code="data-dependent-size")
        if _among(func, _SIZE_READS) and args[0] in self.rows:
            return self._size(func, args, masks[0])
        if any(m is not masks[0] for m in masks[1:]):
            raise CompileError(_REFUSAL.format(
                what=f"{where}: error: this line combines selections by "
                "different masks"),
                               code="data-dependent-size")
        mask = masks[0]
        gathered = self._gather(func, args, kwargs, mask)
        if gathered is not None:
            return gathered
        reduced = self._reduction(func, args, kwargs, mask)
        if reduced is not None:
            return reduced
        return self._rowwise(func, args, kwargs, mask, selections, where)

    def _selection(self, func, args, kwargs):
        """x[mask] or masked_select(x, mask) as rows (None for another
        call)."""
        if func is torch.Tensor.__getitem__:
            x, index = args[0], args[1]
            if isinstance(index, tuple) and len(index) == 1:
                index = index[0]
            if isinstance(index, torch.Tensor) and \
                    index.dtype == torch.bool and index.dim() >= 1 and \
                    tuple(index.shape) == tuple(x.shape[:index.dim()]):
                return self._select(x, index)
        if func in (torch.nonzero, torch.Tensor.nonzero, torch.argwhere,
                    torch.Tensor.argwhere) and \
                not _arg(args, kwargs, 1, "as_tuple", False) and \
                args[0].dim() >= 1:
            # The coordinates of every element, as rows.
            x = args[0]
            grids = torch.meshgrid(
                [torch.arange(n, device=x.device) for n in x.shape],
                indexing="ij")
            rows = self._select(torch.stack(grids, -1), x != 0,
                                (x, lambda t: (t != 0).sum()))
            if x.dim() == 1:
                self.own[rows] = True
            return rows
        if func in (torch.masked_select, torch.Tensor.masked_select):
            x, mask = args[0], _arg(args, kwargs, 1, "mask", None)
            given = mask
            if tuple(x.shape) != tuple(mask.shape):
                x, mask = torch.broadcast_tensors(x, mask)
            shape = x.shape
            return self._select(x, mask, (given, lambda m: m.expand(
                shape).sum()))
        return None

    def _gather(self, func, args, kwargs, mask):
        """torch.gather(x, 0, index) with a selection as the index and x
        not one (DeBERTa-v2's `gather(logits, 0, label_index.expand(...))`):
        row i of the result is x at row i of the index alone, so it is a
        selection by the index's mask (the rows not selected read row 0)."""
        if func not in (torch.gather, torch.Tensor.gather) or \
                set(kwargs) - {"dim", "index"}:
            return None
        x = args[0]
        dim = _arg(args, kwargs, 1, "dim", None)
        index = _arg(args, kwargs, 2, "index", None)
        if x in self.rows or index not in self.rows or \
                not isinstance(dim, int) or x.dim() == 0 or \
                dim % x.dim() != 0:
            return None
        if index in self.own and index.dim() == x.dim() and \
                index.shape[0] == x.shape[0] and all(
                    i <= n for i, n in zip(index.shape, x.shape)):
            # Each row reads its own position: x itself (cut to the
            # index's shape), a read the batch analysis relates to the
            # sample.
            out = x[tuple(slice(0, n) for n in index.shape)]
            out = out.view(out.shape) if out is x else out
            self.rows[out] = mask
            return out
        out = torch.gather(x, dim, torch.where(_expand_mask(mask, index),
                                               index, 0))
        self.rows[out] = mask
        return out

    def _reduction(self, func, args, kwargs, mask):
        """The masked form of a reduction of the selection, or None."""
        x = args[0] if args else None
        if func in (torch.sum, torch.Tensor.sum, torch.mean,
                    torch.Tensor.mean) and x in self.rows:
            dim = _arg(args, kwargs, 1, "dim", None)
            if dim is not None and tuple(dim if isinstance(
                    dim, (list, tuple)) else [dim]) not in ((0,), (-x.dim(),)):
                return None
            if len(args) > 2 or set(kwargs) - {"dim"}:
                return None
            per_row = math.prod(x.shape[1:]) if dim is None else 1
            return _masked_mean_or_sum(
                x, mask, "sum" if func in (torch.sum, torch.Tensor.sum)
                else "mean", per_row, dim)
        if func in _ELEMENTWISE_LOSSES:
            reduction = kwargs.get("reduction", "mean")
            if reduction not in ("mean", "sum") or \
                    any(t not in self.rows for t in args[:2]
                        if isinstance(t, torch.Tensor)):
                return None
            loss = func(*args, **dict(kwargs, reduction="none"))
            return _masked_mean_or_sum(loss, mask, reduction,
                                       math.prod(loss.shape[1:]), None)
        if func in (F.cross_entropy, F.nll_loss):
            return _masked_class_loss(func, args, kwargs, mask, self.rows)
        return None

    def _rowwise(self, func, args, kwargs, mask, selections, where):
        """func on the rows when every op it dispatches keeps the rows
        apart (_keeps_rows) and no other operand reaches the rows; refused
        otherwise."""
        rows = selections[0].shape[0]
        rank = max(t.dim() for t in selections)
        others = [t for t in _tensors(args, kwargs) if t not in self.rows]
        reaches = any(t.dim() >= rank and t.shape[t.dim() - rank] != 1
                      for t in others)
        # A product of the rows with a matrix (a linear layer on them):
        # each row's result is that row's alone.
        product = func in _PRODUCTS and len(selections) == 1 and \
            args[0] is selections[0] and args[0].dim() >= 2 and all(
                t.dim() <= 2 for t in others)
        if product:
            out = func(*args, **kwargs)
            self.rows[out] = mask
            return out
        if all(t.dim() == rank for t in selections) and not reaches:
            with _Ops() as ops:
                out = func(*args, **kwargs)
            if isinstance(out, torch.Tensor) and out.dim() >= 1 and \
                    out.shape[0] == rows and ops.rowwise:
                self.rows[out] = mask
                if args[0] in self.own and func in _OWN_KEEPING:
                    self.own[out] = True  # a view: each row's values kept
                return out
        name = getattr(func, "__name__", str(func))
        raise CompileError(_REFUSAL.format(
            what=f"{where}: error: this line applies {name} to a selection "
            "by a boolean mask"),
                           code="data-dependent-size")


def _expand_mask(mask, x):
    return mask.view((-1,) + (1,) * (x.dim() - 1))


def _masked_mean_or_sum(x, mask, reduction, per_row, dim):
    """sum or mean of the selected rows of x (over every element, or over
    the rows only where dim is given)."""
    kept = torch.where(_expand_mask(mask, x), x, 0)
    total = kept.sum() if dim is None else kept.sum(0)
    if reduction == "sum":
        return total
    return total / (mask.sum() * per_row).to(total.dtype)


def _masked_class_loss(func, args, kwargs, mask, rows):
    """cross_entropy or nll_loss of selected rows with class targets, with
    PyTorch's reductions (the mean divides by the targets' weight)."""
    logits = args[0]
    target = _arg(args, kwargs, 1, "target", None)
    weight = _arg(args, kwargs, 2, "weight", None)
    ignore = kwargs.get("ignore_index", -100)
    reduction = kwargs.get("reduction", "mean")
    if len(args) > 3 or target is None or logits not in rows or \
            target not in rows or target.is_floating_point() or \
            logits.dim() != 2 or reduction not in ("mean", "sum") or \
            (weight is not None and kwargs.get("label_smoothing", 0.0)):
        return None
    # Rows that are not selected are ignored (their targets may be out of
    # range).
    target = torch.where(mask, target, ignore)
    loss = func(logits, target, **dict(
        {k: v for k, v in kwargs.items() if k != "target"},
        weight=weight, reduction="none"))
    total = torch.where(mask, loss, 0).sum()
    if reduction == "sum":
        return total
    valid = mask & (target != ignore)
    if weight is None:
        return total / valid.sum().to(total.dtype)
    w = weight[torch.where(valid, target, 0)]
    return total / torch.where(valid, w, 0).sum()

