"""The operations of mixture-of-experts routers (and of random masking by
sorting noise) for tracing, which torch-mlir lowers to a sort (topk, sort)
or not at all (histc):
- aten.topk as k rounds of a maximum and the first index that reaches it
  (a comparison with an iota), the values picked by that comparison;
- aten.sort (argsort, ViTMAE's per-sample shuffle of patches by the
  argsort of uniform noise) along a dimension of at most _SORT_SIZE
  entries as the rank of each element (how many come before it: a
  comparison of every pair) and the element of each rank picked by a
  comparison of the ranks with an iota: exact, a permutation;
- aten.histc as the bin of every element compared with an iota of the bins
  and summed over the elements. Load-balancing losses count the tokens
  routed to each expert this way (transformers' load_balancing_loss_func);
  the sum over the elements is an ordinary reduction over the batch, so
  --ga-accumulate places it like any other count;
- aten.scatter.src of a few values per row (topk's backward: the gradient
  of the k values written at their indices into zeros, which torch-mlir's
  lowering crashes on, a segmentation fault in its conversion of
  aten.scatter.src, e.g. zeros[32, 4].scatter(-1, idx[32, 2],
  grad[32, 2]) of Mixtral's router) as k rounds of a comparison of the
  index with an iota and a torch.where: exact, every element written is a
  value of `src` or of `self`;
- aten.scatter.value of a few positions per row (DeepSeek-V3's mask of
  the groups chosen) the same way: a position written by any round takes
  the value."""

import torch


aten = torch.ops.aten


def _histc(self, bins=100, min=0, max=0):
    """aten.histc with PyTorch's semantics: `bins` equal bins over
    [min, max] (the data's own extremes when min == max, widened by 1 on
    each side when those are equal too); elements outside the range are not
    counted, and `max` itself falls in the last bin. Not differentiable, as
    in PyTorch."""
    x = self.reshape(-1)
    if min == max:
        low, high = x.min(), x.max()
        same = low == high
        low = torch.where(same, low - 1, low)
        high = torch.where(same, high + 1, high)
    else:
        low, high = float(min), float(max)
    inside = (x >= low) & (x <= high)
    position = ((x - low) * bins / (high - low)).floor()
    position = torch.clamp(position, 0, bins - 1).to(torch.int64)
    classes = torch.arange(bins, device=x.device)
    hot = (position.unsqueeze(-1) == classes) & inside.unsqueeze(-1)
    return hot.to(self.dtype).sum(0)


def _topk(self, k, dim=-1, largest=True, sorted=True):
    """aten.topk: the k largest (smallest) values along `dim` in order,
    and their indices; among equal values the lowest index first. An
    unsorted top-k (sorted=False: DeepSeek-V3's routers) leaves the order
    to the implementation, and this order is one: the same values and
    indices, each index with its value."""
    if self.dim() == 0:
        return NotImplemented
    dim %= self.dim()
    n = self.shape[dim]
    shape = [1] * self.dim()
    shape[dim] = n
    iota = torch.arange(n, device=self.device).view(shape)
    remaining = self if largest else -self
    values, indices = [], []
    for _ in range(k):
        best = remaining.amax(dim, keepdim=True)
        first = torch.where(remaining == best, iota, n).amin(dim, keepdim=True)
        hot = iota == first
        values.append(torch.where(hot, self, 0).sum(dim, keepdim=True))
        indices.append(first)
        remaining = torch.where(hot, float("-inf"), remaining)
    return torch.cat(values, dim), torch.cat(indices, dim)


# The longest dimension that _sort sorts (it compares every pair: n * n
# entries per row).
_SORT_SIZE = 1024


def _sort(self, dim=-1, descending=False, stable=False):
    """aten.sort (stable or not: the stable order is one the unstable sort
    may return) along `dim` of at most _SORT_SIZE entries: the values in
    order and their indices, equal values in the order of their indices,
    NaN last (first when descending), as PyTorch orders them. Element i's
    rank is the number of elements that come before it: smaller (larger
    when descending) or equal at a lower index."""
    if self.dim() == 0 or self.dtype == torch.bool or \
            self.shape[dim] > _SORT_SIZE:
        return NotImplemented
    x = self.movedim(dim, -1)
    n = x.shape[-1]
    mine, other = x.unsqueeze(-1), x.unsqueeze(-2)  # [..., i, 1], [..., 1, j]
    if descending:
        mine, other = other, mine
    before = other < mine
    same = other == mine
    if self.is_floating_point():
        # NaN compares false with everything: after every number, equal
        # to the other NaN (PyTorch's order), on either side.
        before = before | (mine.isnan() & ~other.isnan())
        same = same | (mine.isnan() & other.isnan())
    iota = torch.arange(n, device=self.device)
    earlier = iota < iota.view(n, 1)  # [i, j]: j < i
    rank = (before | (same & earlier)).sum(-1)
    hot = rank.unsqueeze(-2) == iota.view(n, 1)  # [..., rank, i]
    indices = torch.where(hot, iota, 0).sum(-1)
    # The value of each rank: the one element the row holds there (a
    # maximum over -inf elsewhere keeps -0.0 and NaN as they are).
    low = float("-inf") if self.is_floating_point() else \
        torch.iinfo(self.dtype).min
    values = torch.where(hot, x.unsqueeze(-2), low).amax(-1)
    return values.movedim(-1, dim), indices.movedim(-1, dim)


def _sort_stable(self, *, stable=None, dim=-1, descending=False):
    return _sort(self, dim, descending, bool(stable))


# The most values per row that _scatter_src writes in rounds (topk's k).
_SCATTER_ROUNDS = 16


def _scatter_src(self, dim, index, src):
    """aten.scatter.src where `index` and `src` have the shape of `self`
    but along `dim`, of at most _SCATTER_ROUNDS entries: position j of a
    row takes src[..., r, ...] for the last r whose index is j (PyTorch
    leaves the order of equal indices unspecified; topk's are distinct),
    else self's value. Any other scatter is left to torch-mlir (which
    refuses it)."""
    dim %= max(self.dim(), 1)
    if self.dim() == 0 or index.shape != src.shape or \
            index.dim() != self.dim() or \
            index.shape[dim] > _SCATTER_ROUNDS or any(
                index.shape[d] != self.shape[d]
                for d in range(self.dim()) if d != dim):
        return NotImplemented
    # Along the last dimension, the k indices of a row compared at once with
    # an iota of the positions ([..., n, k]): the rows of `index` are read
    # with unit stride (a column index[..., r] of a [T, k] tensor is a
    # strided 1-element read that the CPU pipeline's vectorizer does not
    # lower to LLVM).
    x, idx, values = (t.movedim(dim, -1) for t in (self, index, src))
    n, k = x.shape[-1], idx.shape[-1]
    hot = idx.unsqueeze(-2) == torch.arange(n, device=self.device).view(n, 1)
    rounds = torch.arange(k, device=self.device)
    # The last round that writes each position (-1: none).
    last = torch.where(hot, rounds, -1).amax(-1)
    picked = torch.where(rounds == last.unsqueeze(-1),
                         values.unsqueeze(-2).to(self.dtype), 0).sum(-1)
    return torch.where(last >= 0, picked, x).movedim(-1, dim)


def _scatter_value(self, dim, index, value):
    """aten.scatter.value (DeepSeek-V3's group mask: `mask.scatter_(1,
    group_idx, 1)`) where `index` has the shape of `self` but along `dim`,
    of at most _SCATTER_ROUNDS entries: a position written by any of them
    takes `value`, else self's value. Equal indices write the same value,
    so their order does not matter. Any other scatter is left to
    torch-mlir (which refuses it)."""
    dim %= max(self.dim(), 1)
    if self.dim() == 0 or index.dim() != self.dim() or \
            index.shape[dim] > _SCATTER_ROUNDS or any(
                index.shape[d] != self.shape[d]
                for d in range(self.dim()) if d != dim):
        return NotImplemented
    x, idx = self.movedim(dim, -1), index.movedim(dim, -1)
    n = x.shape[-1]
    hot = idx.unsqueeze(-2) == torch.arange(n, device=self.device).view(n, 1)
    written = hot.sum(-1) > 0
    return torch.where(written, torch.full((), value, dtype=self.dtype,
                                           device=self.device),
                       x).movedim(-1, dim)


def register(table):
    """Adds the decompositions of this module to a trace's table."""
    table[aten.histc.default] = _histc
    table[aten.topk.default] = _topk
    table[aten.sort.default] = _sort
    table[aten.sort.stable] = _sort_stable
    table[aten.scatter.src] = _scatter_src
    table[aten.scatter.value] = _scatter_value
