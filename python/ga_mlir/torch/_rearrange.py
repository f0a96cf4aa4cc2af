"""Decompositions of ops that move elements to other positions, for
tracing: torch.roll as slices and a concatenation (PyTorch's decomposition
gathers with a computed index, which torch-mlir does not lower), and the
accumulating write by one index tensor (the backward of `x[idx]`, e.g. a
table of relative position biases read by a buffer of indices) as a
product with the one-hot rows of the indices (a scatter-add, which
ga-mlir does not compile)."""

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


def register(table):
    """Adds the decompositions above to a make_fx decomposition table
    (index_put falls back to the table's own entry, if any)."""
    table[aten.roll.default] = _roll
    fallback = table.get(aten.index_put.default)

    def index_put(*args, **kwargs):
        out = _index_put(*args, **kwargs)
        if out is NotImplemented and fallback is not None:
            return fallback(*args, **kwargs)
        return out
    table[aten.index_put.default] = index_put
