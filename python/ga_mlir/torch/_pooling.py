"""Pooling windows as PyTorch defines them, for the decompositions of
max and average pooling: the output size (with ceil_mode), average
pooling's forward and backward for any windows (overlapping, padded, a
last window cut by ceil_mode), max pooling with indices over any number of
dimensions (3-d; the 2-d one is in _decompositions), and the sum of
window-sized gradient terms back onto the input that the backwards
share."""

import functools
import itertools
import math

import torch
import torch.nn.functional as F

from ._convolutions import _pad


def output_size(size, kernel, stride, padding, dilation, ceil_mode):
    """(windows, extra) along one dimension of `size` elements: the number
    of windows by PyTorch's formula (with ceil_mode, rounded up, but the
    last window must start inside the input or the left padding), and how
    many elements the last window reads past the right padding (0 without
    ceil_mode)."""
    span = dilation * (kernel - 1) + 1
    windows = (size + 2 * padding - span + (stride - 1 if ceil_mode else 0)
               ) // stride + 1
    if ceil_mode and (windows - 1) * stride >= size + padding:
        windows -= 1
    extra = max(0, (windows - 1) * stride + span - (size + 2 * padding))
    return windows, extra


def scatter_windows(term, shape, out, kernel, stride, padding, dilation):
    """The input gradient (shape [..., *spatial], any number of spatial
    dimensions) that receives, at each input position, the terms of the
    windows that read it: term(*position) is the window-sized ([..., *out])
    term of kernel position `position`; positions in the padding or past
    the input are dropped.

    Along each dimension, kernel position i of window r reads input index
    r * s - p + i * d = (r + e) * s + a (a = its phase, e = its shift):
    shifted by e, the term lands on the indices of phase a of the input.
    Each phase sums its terms; the phases interleave into the input
    gradient. A position's terms are added in the order of PyTorch's
    kernels (windows in ascending order, which is kernel positions in
    descending order), starting from 0.0: the same rounding."""
    n = len(kernel)
    spatial, lead = list(shape[-n:]), list(shape[:-n])
    per_phase = [-(-size // s) for size, s in zip(spatial, stride)]
    phases = {}
    for position in itertools.product(*(reversed(range(k)) for k in kernel)):
        splits = [divmod(i * d - p, s) for i, d, p, s in
                  zip(position, dilation, padding, stride)]
        shifted = _pad(term(*position), [
            (e, u - o - e) for (e, _), u, o in zip(splits, per_phase, out)])
        key = tuple(a for _, a in splits)
        phases[key] = phases[key] + shifted if key in phases \
            else 0.0 + shifted
    cut = (Ellipsis,) + tuple(slice(0, size) for size in spatial)
    if all(s == 1 for s in stride):
        return phases[(0,) * n][cut]
    zeros = next(iter(phases.values())).new_zeros(lead + per_phase)
    # [..., *per_phase, *stride]: phase (a, b, ...) at indices u * s + a
    # along each dimension, then interleaved.
    grid = torch.stack([phases.get(key, zeros) for key in itertools.product(
        *(range(s) for s in stride))], dim=-1)
    grid = grid.reshape(lead + per_phase + list(stride))
    k = len(lead)
    grid = grid.permute(list(range(k)) + [
        d for i in range(n) for d in (k + i, k + n + i)])
    return grid.reshape(lead + [u * s for u, s in zip(per_phase, stride)]
                        )[cut]


def _tuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v) * (n // len(v))


def _windows(self, n, kernel_size, stride, padding, dilation, ceil_mode):
    """(kernel, stride, padding, dilation, out, extra) of a pooling over
    the last n dimensions of `self` (see output_size)."""
    kernel, stride = _tuple(kernel_size, n), _tuple(stride or kernel_size, n)
    padding, dilation = _tuple(padding, n), _tuple(dilation, n)
    sizes = [output_size(size, k, s, p, d, ceil_mode) for size, k, s, p, d in
             zip(self.shape[-n:], kernel, stride, padding, dilation)]
    return kernel, stride, padding, dilation, [o for o, _ in sizes], \
        [e for _, e in sizes]


def _strided(x, position, out, stride, dilation):
    """The elements of x (padded) that kernel position `position` reads in
    each window: [..., *out]."""
    return x[(Ellipsis,) + tuple(
        slice(i * d, i * d + (o - 1) * s + 1, s)
        for i, o, s, d in zip(position, out, stride, dilation))]


def _along(v, axis, n):
    """A 1-d tensor viewed along axis `axis` of n trailing dimensions."""
    return v.view([-1 if a == axis else 1 for a in range(n)])


def _divisors(self, kernel, stride, padding, out, count_include_pad,
              divisor_override):
    """Each window's divisor as PyTorch's kernel computes it ([*out]):
    divisor_override, else the window's size within the padded input
    (count_include_pad; a last window cut by ceil_mode counts only up to
    the right padding), else its number of input elements."""
    n = len(kernel)
    if divisor_override:
        return torch.full(out, float(divisor_override), dtype=self.dtype,
                          device=self.device)
    total = 1
    for axis, (size, k, s, p, o) in enumerate(zip(
            self.shape[-n:], kernel, stride, padding, out)):
        start = torch.arange(o, device=self.device) * s - p
        end = torch.clamp(start + k, max=size + p)
        if not count_include_pad:
            start, end = torch.clamp(start, min=0), torch.clamp(end, max=size)
        total = total * _along(end - start, axis, n)
    return total.to(self.dtype)


def avg_pool(self, n, kernel_size, stride=(), padding=0, ceil_mode=False,
             count_include_pad=True, divisor_override=None):
    """aten.avg_pool2d/3d (n spatial dimensions) for any windows: the sum
    of each window's elements (zeros in the padding and past it), in the
    order of PyTorch's CPU kernel (row-major in the window), divided by the
    window's divisor (_divisors)."""
    kernel, stride, padding, dilation, out, extra = _windows(
        self, n, kernel_size, stride, padding, 1, ceil_mode)
    x = _pad(self, [(p, p + e) for p, e in zip(padding, extra)])
    total = 0.0
    for position in itertools.product(*(range(k) for k in kernel)):
        total = total + _strided(x, position, out, stride, dilation)
    return total / _divisors(self, kernel, stride, padding, out,
                             count_include_pad, divisor_override)


def avg_pool_backward(grad_output, self, n, kernel_size, stride, padding,
                      ceil_mode, count_include_pad, divisor_override):
    """aten.avg_pool2d/3d_backward for any windows: each window's gradient
    divided by its divisor, added to every input element it read, as
    PyTorch's kernel adds them (scatter_windows)."""
    kernel, stride, padding, dilation, out, _ = _windows(
        self, n, kernel_size, stride, padding, 1, ceil_mode)
    share = grad_output / _divisors(self, kernel, stride, padding, out,
                                    count_include_pad, divisor_override)
    return scatter_windows(lambda *position: share, self.shape, out, kernel,
                           stride, padding, dilation)


def avg_pool2d(self, *args):
    return avg_pool(self, 2, *args)


def avg_pool2d_backward(grad_output, self, *args):
    return avg_pool_backward(grad_output, self, 2, *args)


def _window_starts(self, n, stride, padding, out):
    """Each window's first index along each of the n dimensions (in the
    input, before padding), viewed along its own axis."""
    return [_along(torch.arange(o, device=self.device) * s - p, axis, n)
            for axis, (o, s, p) in enumerate(zip(out, stride, padding))]


def _flat_index(starts, position, dilation, inner):
    """The flat input index that kernel position `position` reads in each
    window."""
    return sum((start + i * d) * step for start, i, d, step in
               zip(starts, position, dilation, inner))


def max_pool_with_indices(self, n, kernel_size, stride=(), padding=0,
                          dilation=1, ceil_mode=False):
    """aten.max_pool3d_with_indices (n = 3; any n): the maxima of the
    windows (the padding and past it read -inf) and the flat input index
    of each, as PyTorch's kernel records it: the last NaN inside the input
    if there is one, else the first position inside the input that holds
    the maximum (a padded position never: in a window whose input elements
    are all -inf its index would lie outside the input)."""
    kernel, stride, padding, dilation, out, extra = _windows(
        self, n, kernel_size, stride, padding, dilation, ceil_mode)
    spatial = list(self.shape[-n:])
    pads = []
    for p, e in zip(reversed(padding), reversed(extra)):
        pads += [p, p + e]
    x = F.pad(self, pads, value=-math.inf) if any(pads) else self
    positions = list(itertools.product(*(range(k) for k in kernel)))
    windows = torch.stack([_strided(x, pos, out, stride, dilation)
                           for pos in positions], dim=-1)
    values = torch.amax(windows, dim=-1)
    starts = _window_starts(self, n, stride, padding, out)
    inside = torch.stack([
        functools.reduce(torch.logical_and, [
            (start + i * d >= 0) & (start + i * d < size)
            for start, i, d, size in zip(starts, pos, dilation, spatial)])
        for pos in positions], dim=-1)
    first_max = torch.argmax(
        (inside & (windows == values.unsqueeze(-1))).to(torch.uint8), dim=-1)
    numbers = torch.arange(len(positions), device=self.device)
    last_nan = torch.amax(
        torch.where(inside & windows.isnan(), numbers, -1), dim=-1)
    which = torch.where(last_nan >= 0, last_nan, first_max)
    inner = [math.prod(spatial[a + 1:]) for a in range(n)]
    index = 0
    for a in range(n):  # `which` is row-major over the kernel
        i = torch.remainder(torch.div(which, math.prod(kernel[a + 1:]),
                                      rounding_mode="floor"), kernel[a])
        index = index + (starts[a] + i * dilation[a]) * inner[a]
    return values, index


def max_pool_with_indices_backward(grad_output, self, n, kernel_size,
                                   stride, padding, dilation, ceil_mode,
                                   indices):
    """The gradient goes to the input position that the forward recorded
    in `indices`: for each kernel position, the windows whose index is that
    position give a window-sized term (scatter_windows)."""
    kernel, stride, padding, dilation, out, _ = _windows(
        self, n, kernel_size, stride, padding, dilation, ceil_mode)
    spatial = list(self.shape[-n:])
    inner = [math.prod(spatial[a + 1:]) for a in range(n)]
    starts = _window_starts(self, n, stride, padding, out)

    def term(*position):
        hit = indices == _flat_index(starts, position, dilation, inner)
        return torch.where(hit, grad_output, 0.0)
    return scatter_windows(term, self.shape, out, kernel, stride, padding,
                           dilation)


def register(table):
    """The 3-d poolings' decompositions in a make_fx decomposition table
    (the 2-d ones are in _decompositions)."""
    aten = torch.ops.aten
    table[aten.max_pool3d_with_indices.default] = \
        lambda self, *args: max_pool_with_indices(self, 3, *args)
    table[aten.max_pool3d_with_indices_backward.default] = \
        lambda grad, self, *args: max_pool_with_indices_backward(
            grad, self, 3, *args)
    table[aten.avg_pool3d.default] = lambda self, *args: avg_pool(
        self, 3, *args)
    table[aten.avg_pool3d_backward.default] = \
        lambda grad, self, *args: avg_pool_backward(grad, self, 3, *args)
