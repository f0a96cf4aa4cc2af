"""Decompositions of ops that move elements to other positions, for
tracing: torch.roll as slices and a concatenation (PyTorch's decomposition
gathers with a computed index, which torch-mlir does not lower), and the
accumulating write by one index tensor (the backward of `x[idx]`, e.g. a
table of relative position biases read by a buffer of indices) as a
product with the one-hot rows of the indices (a scatter-add, which
ga-mlir does not compile), and as_strided_scatter whose view is a slicing
as slice_scatters (torch-mlir does not lower it)."""

import torch

aten = torch.ops.aten


def _roll(self, shifts, dims=()):
    """aten.roll: along each dimension d with shift s, the last s % n
    elements (n = its size) followed by the first n - s % n; without
    dimensions, the flattened tensor rolled and reshaped back. The values
    are copies: the same as PyTorch's."""
    if isinstance(shifts, int):
        shifts = [shifts]
    if isinstance(dims, int):
        dims = [dims]
    if not dims:
        return _roll(self.reshape(-1), shifts, [0]).reshape(self.shape)
    x = self
    for shift, dim in zip(shifts, dims):
        n = x.shape[dim]
        s = shift % n if n else 0
        if s:
            x = torch.cat([x.narrow(dim, n - s, s), x.narrow(dim, 0, n - s)],
                          dim)
    return x.clone() if x is self else x


def _single_index(indices, rank):
    """(k, index) when `indices` (aten.index_put's list) holds one integer
    index tensor, at dimension k, and None elsewhere; else None."""
    present = [(k, t) for k, t in enumerate(indices) if t is not None]
    if len(present) != 1 or len(indices) > rank:
        return None
    k, index = present[0]
    if index.is_floating_point() or index.dtype == torch.bool:
        return None
    return k, index


def _index_put(self, indices, values, accumulate=False):
    """aten.index_put(accumulate=True) with one index tensor at dimension
    k: `self` plus, for each position j of dimension k, the sum of the
    values whose index is j, as a product of the values with the one-hot
    rows of the (flattened) indices. Each output element sums the same
    terms as PyTorch's kernel (plus zeros), in the order of the product:
    within rounding of PyTorch's sequential sum. Other forms are left to
    the other decompositions (NotImplemented)."""
    found = _single_index(indices, self.dim())
    if not accumulate or found is None or not self.is_floating_point():
        return NotImplemented
    k, index = found
    n = self.shape[k]
    lead, rest = self.shape[:k], self.shape[k + 1:]
    index = torch.where(index < 0, index + n, index).reshape(-1)
    m = index.numel()
    moved = values.expand(*lead, *indices[k].shape, *rest).reshape(
        lead.numel(), m, rest.numel())
    hot = (index.view(m, 1) == torch.arange(n, device=self.device).view(
        1, n)).to(self.dtype)
    # [L, R, m] @ [m, n] -> [L, R, n] -> [L, n, R]
    added = torch.matmul(moved.transpose(1, 2), hot).transpose(1, 2)
    return self + added.reshape(self.shape)


def _strided_region(shape, size, stride, offset):
    """The view as_strided(size, stride, offset) of a contiguous tensor of
    `shape` as basic slicing: (slices, order), one (start, stop, step) per
    dimension of `shape`, and for each dimension of the view of size > 1
    the dimension of `shape` it runs along; None when the view is not such
    a slicing (two view dimensions along one input dimension, a stride that
    no input dimension's stride divides, a view past the end)."""
    contiguous = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        contiguous[d] = contiguous[d + 1] * shape[d + 1]
    start = [(offset // c) % n if n else 0
             for c, n in zip(contiguous, shape)]
    if sum(s * c for s, c in zip(start, contiguous)) != offset:
        return None
    steps, order = [None] * len(shape), []
    for n, st in zip(size, stride):
        if n == 1:
            continue
        d = next((d for d, c in enumerate(contiguous)
                  if st > 0 and st % c == 0 and steps[d] is None), None)
        if d is None or start[d] + (n - 1) * (st // contiguous[d]) >= \
                shape[d]:
            return None
        steps[d] = (st // contiguous[d], n)
        order.append(d)
    slices = [(b, b + 1, 1) if s is None else (b, b + (s[1] - 1) * s[0] + 1,
                                                 s[0])
              for b, s in zip(start, steps)]
    return slices, order


def _slice_write(x, region, slices, dim=0):
    """x with its strided slice `slices` (one (start, stop, step) per
    dimension, from `dim` on) replaced by `region`, as nested
    slice_scatters."""
    if dim == len(slices):
        return region
    start, stop, step = slices[dim]
    part = aten.slice.Tensor(x, dim, start, stop, step)
    part = _slice_write(part, region, slices, dim + 1)
    return aten.slice_scatter.default(x, part, dim, start, stop, step)


def _as_strided_scatter(self, src, size, stride, storage_offset=None):
    """aten.as_strided_scatter (from the backward of an in-place write
    into a view, e.g. `bias[k:2 * k].zero_()` on a clone) on a contiguous
    tensor whose strided view is a basic slicing (_strided_region): the
    slices written with slice_scatter (torch-mlir does not lower
    as_strided_scatter). Other views: NotImplemented."""
    if not self.is_contiguous():
        return NotImplemented
    if 0 in size:  # nothing written
        return self.clone()
    found = _strided_region(list(self.shape), list(size), list(stride),
                            storage_offset or 0)
    if found is None and self.dim() != 1:  # a view across rows, flat
        flat = _as_strided_scatter(self.reshape(-1), src, size, stride,
                                   storage_offset)
        return flat if flat is NotImplemented else flat.view(self.shape)
    if found is None:
        return NotImplemented
    slices, order = found
    # src without its size-1 dimensions, its dimensions in the order of
    # `self`'s, and a dimension of 1 for each dimension of `self` that the
    # view does not run along.
    values = src.reshape([n for n in size if n != 1])
    values = values.permute(sorted(range(len(order)), key=order.__getitem__))
    region = values.reshape([len(range(*s)) for s in slices])
    return _slice_write(self, region, slices)


def register(table):
    """Adds the decompositions above to a make_fx decomposition table
    (index_put falls back to the table's own entry, if any; an
    as_strided_scatter that is not a slicing is left to torch-mlir)."""
    table[aten.roll.default] = _roll
    table[aten.as_strided_scatter.default] = _as_strided_scatter
    fallback = table.get(aten.index_put.default)

    def index_put(*args, **kwargs):
        out = _index_put(*args, **kwargs)
        if out is NotImplemented and fallback is not None:
            return fallback(*args, **kwargs)
        return out
    table[aten.index_put.default] = index_put
