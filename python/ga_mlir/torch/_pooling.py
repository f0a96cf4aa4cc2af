"""Pooling windows as PyTorch defines them, for the decompositions of
max_pool2d and avg_pool2d: the output size (with ceil_mode), average
pooling's forward and backward for any windows (overlapping, padded, a
last window cut by ceil_mode), and the sum of window-sized gradient terms
back onto the input that both backwards share."""

import torch

from ._convolutions import _pad


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v) * (2 // len(v))


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
    """The input gradient (shape [..., h, w]) that receives, at each input
    position, the terms of the windows that read it: term(i, j) is the
    window-sized ([..., ho, wo] = out) term of kernel position (i, j);
    positions in the padding or past the input are dropped.

    Kernel position (i, j) of window (r, c) reads input row
    r * sh - ph + i * dh = (r + e) * sh + a (a = its row phase, e = its
    shift; columns alike): shifted by (e, f), the term lands on the rows and
    columns of phase (a, b) of the input. Each phase sums its terms; the
    phases interleave into the input gradient. A position's terms are added
    in the order of PyTorch's kernels (windows in ascending order, which is
    kernel positions in descending order), starting from 0.0: the same
    rounding."""
    (kh, kw), (sh, sw) = kernel, stride
    (ph, pw), (dh, dw) = padding, dilation
    *lead, h, w = shape
    ho, wo = out
    hu, wv = -(-h // sh), -(-w // sw)  # rows and columns of a phase
    phases = {}
    for i in reversed(range(kh)):
        for j in reversed(range(kw)):
            e, a = divmod(i * dh - ph, sh)
            f, b = divmod(j * dw - pw, sw)
            shifted = _pad(term(i, j), ((e, hu - ho - e), (f, wv - wo - f)))
            phases[a, b] = phases[a, b] + shifted if (a, b) in phases \
                else 0.0 + shifted
    if (sh, sw) == (1, 1):
        return phases[0, 0][..., :h, :w]
    some = next(iter(phases.values()))
    zeros = some.new_zeros((*lead, hu, wv))
    # [..., hu, sh, wv, sw]: phase (a, b) at rows u * sh + a, columns
    # v * sw + b.
    grid = torch.stack([
        torch.stack([phases.get((a, b), zeros) for b in range(sw)], dim=-1)
        for a in range(sh)], dim=-3)
    return grid.reshape(*lead, hu * sh, wv * sw)[..., :h, :w]


def _avg_windows(self, kernel_size, stride, padding, ceil_mode):
    """(kernel, stride, padding, (ho, wo), (extra_h, extra_w)) of an
    avg_pool2d."""
    kernel, stride = _pair(kernel_size), _pair(stride or kernel_size)
    padding = _pair(padding)
    sizes = [output_size(n, k, s, p, 1, ceil_mode) for n, k, s, p in
             zip(self.shape[-2:], kernel, stride, padding)]
    return kernel, stride, padding, tuple(o for o, _ in sizes), \
        tuple(e for _, e in sizes)


def _divisors(self, kernel, stride, padding, out, count_include_pad,
              divisor_override):
    """Each window's divisor as PyTorch's kernel computes it ([ho, wo]):
    divisor_override, else the window's size within the padded input
    (count_include_pad; a last window cut by ceil_mode counts only up to
    the right padding), else its number of input elements."""
    if divisor_override:
        return torch.full(out, float(divisor_override), dtype=self.dtype,
                          device=self.device)
    counts = []
    for n, k, s, p, o in zip(self.shape[-2:], kernel, stride, padding, out):
        start = torch.arange(o, device=self.device) * s - p
        end = torch.clamp(start + k, max=n + p)
        if not count_include_pad:
            start, end = torch.clamp(start, min=0), torch.clamp(end, max=n)
        counts.append(end - start)
    return (counts[0].view(-1, 1) * counts[1].view(1, -1)).to(self.dtype)


def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """aten.avg_pool2d for any windows: the sum of each window's elements
    (zeros in the padding and past it), in the order of PyTorch's CPU
    kernel (row by row), divided by the window's divisor (_divisors)."""
    kernel, stride, padding, out, extra = _avg_windows(
        self, kernel_size, stride, padding, ceil_mode)
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    (ho, wo), (eh, ew) = out, extra
    x = _pad(self, ((ph, ph + eh), (pw, pw + ew)))
    total = 0.0
    for i in range(kh):
        for j in range(kw):
            total = total + x[..., i:i + (ho - 1) * sh + 1:sh,
                              j:j + (wo - 1) * sw + 1:sw]
    return total / _divisors(self, kernel, stride, padding, out,
                             count_include_pad, divisor_override)


def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
                        ceil_mode, count_include_pad, divisor_override):
    """aten.avg_pool2d_backward for any windows: each window's gradient
    divided by its divisor, added to every input element it read, as
    PyTorch's kernel adds them (scatter_windows)."""
    kernel, stride, padding, out, _ = _avg_windows(
        self, kernel_size, stride, padding, ceil_mode)
    share = grad_output / _divisors(self, kernel, stride, padding, out,
                                    count_include_pad, divisor_override)
    return scatter_windows(lambda i, j: share, self.shape, out, kernel,
                           stride, padding, (1, 1))
