"""The operations of mixture-of-experts routers for tracing, which torch-mlir
lowers to a sort (topk) or not at all (histc):
- aten.topk as k rounds of a maximum and the first index that reaches it
  (a comparison with an iota), the values picked by that comparison;
- aten.histc as the bin of every element compared with an iota of the bins
  and summed over the elements. Load-balancing losses count the tokens
  routed to each expert this way (transformers' load_balancing_loss_func);
  the sum over the elements is an ordinary reduction over the batch, so
  --ga-accumulate places it like any other count."""

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
    """aten.topk (sorted): the k largest (smallest) values along `dim` in
    order, and their indices; among equal values the lowest index first.
    An unsorted top-k, whose order PyTorch leaves to its kernel, is left to
    torch-mlir (and refused there)."""
    if not sorted or self.dim() == 0:
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


def register(table):
    """Adds the decompositions of this module to a trace's table."""
    table[aten.histc.default] = _histc
    table[aten.topk.default] = _topk
