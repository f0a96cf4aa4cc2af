"""Convolutions that torch-mlir does not lower, as operations it does.

torch-mlir (20261001) lowers a convolution with one group, any stride,
padding and dilation, and its backward; it fails on grouped and depthwise
convolutions with stride 1 ('tensor.expand_shape' op expected dimension 1 of
collapsed type to be static), miscompiles the weight gradient of grouped
ones with stride 2 and padding (computed as if ungrouped, C_out x C_in x k x k,
and cast into the weight's C_out x C_in/G x k x k: --ga-check-constant-indices
refuses such casts), and leaves the backward of transposed convolutions illegal
(aten.convolution_backward). While tracing, F.conv1d/2d/3d with groups > 1
and F.conv_transpose1d/2d/3d are therefore replaced (a TorchFunctionMode,
above autograd, so that the backward is traced from the replacement's own
operations) by:

  grouped:    the input's windows as strided slices stacked along a new
              dimension ("im2col") times each group's weight as a batched
              product with the batch outermost (depthwise: a product and a
              sum over the kernel positions), for every stride, padding and
              dilation: operations whose forward and backward torch-mlir
              lowers exactly;
  transposed: the gradient of a convolution with respect to its input, as
              PyTorch defines it, by phases: along each dimension the
              output positions p + stride * m are reached by the taps t with
              t * dilation = p (mod stride) only, so each phase is a
              stride-1 convolution of the (padded) input with those taps,
              flipped, channels swapped per group; the phases are then
              interleaved (no zeros inserted between the input's elements:
              at stride 2, 3/4 of such a convolution's work and its window
              copy would be on zeros).

The backward of every other convolution (aten.convolution_backward) is
decomposed too (convolution_backward): its input gradient as the transposed
convolution above, its weight gradient as one forward convolution with the
samples as the reduced channels (weight_gradient).

Each output element is the same sum of products as PyTorch's (in another
order: within rounding)."""

import itertools
import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode


def _tuple(value, n):
    return (value,) * n if isinstance(value, int) else tuple(value)


def _same_padding(kernel, dilation):
    """padding='same' as PyTorch pads it: the total d * (k - 1) split with
    the extra element at the end."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _pad(x, pads):
    """x padded (or cut, for negative amounts) by (before, after) pairs
    along its last len(pads) dimensions."""
    flat = []
    for before, after in reversed(pads):
        flat += [before, after]
    return F.pad(x, flat) if any(flat) else x


def _windows(x, kernel, stride, dilation):
    """The windows of x [B, C, *spatial] (already padded) as [B, C, K,
    *out]: for each of the K kernel positions, the strided slice of the
    input that it multiplies."""
    spatial = x.shape[2:]
    out = [(s - d * (k - 1) - 1) // st + 1
           for s, k, st, d in zip(spatial, kernel, stride, dilation)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"convolution: kernel {list(kernel)} larger than "
                           f"the padded input {list(spatial)}")
    slices = []
    for position in itertools.product(*(range(k) for k in kernel)):
        index = [slice(None), slice(None)]
        for p, o, st, d in zip(position, out, stride, dilation):
            index.append(slice(p * d, p * d + (o - 1) * st + 1, st))
        slices.append(x[tuple(index)])
    return torch.stack(slices, dim=2), out


def _full_lists(lists, n):
    """`lists` with each one-element list repeated to `n` entries; None
    when none needed it."""
    out = [list(v) * n if len(v) == 1 and n > 1 else list(v) for v in lists]
    return None if out == [list(v) for v in lists] else out


def expanded_convolution(x, weight, bias, stride, padding, dilation,
                         transposed, output_padding, groups):
    """aten.convolution with a one-element parameter list (F.conv2d with
    padding="valid" passes output_padding [0]) as the same convolution with
    the lists written out per spatial dimension; NotImplemented when they
    are. Traced as given, the weight gradient of such a convolution (SigLIP's
    patch embedding) came out with a garbage width (2213513222, a
    one-element list read as two), and torch-mlir refused it."""
    full = _full_lists((stride, padding, dilation, output_padding),
                       weight.dim() - 2)
    if full is None:
        return NotImplemented
    return torch.ops.aten.convolution.default(x, weight, bias, full[0],
                                              full[1], full[2], transposed,
                                              full[3], groups)


def expanded_backward(grad, x, weight, bias_sizes, stride, padding,
                      dilation, transposed, output_padding, groups, mask):
    """aten.convolution_backward with its lists written out (see
    expanded_convolution); NotImplemented when they are."""
    full = _full_lists((stride, padding, dilation, output_padding),
                       weight.dim() - 2)
    if full is None:
        return NotImplemented
    return torch.ops.aten.convolution_backward.default(
        grad, x, weight, bias_sizes, full[0], full[1], full[2], transposed,
        full[3], groups, mask)


def convolution_backward(grad, x, weight, bias_sizes, stride, padding,
                         dilation, transposed, output_padding, groups, mask):
    """aten.convolution_backward of a convolution with any number of
    spatial dimensions and groups (a decomposition for the trace;
    NotImplemented for a transposed one) as forward convolutions, whose
    largest tensors are the input, the output gradient and the weight:

      input gradient:  the transposed convolution of the output gradient
                       (transposed_convolution: by phases, stride-1
                       convolutions with the taps of each, flipped, channels
                       swapped per group, interleaved);
      weight gradient: weight_gradient.

    torch-mlir's own lowering of the weight gradient is a grouped
    convolution with one group per sample, holding C_in x B x C_out x the
    input's pixels before it sums over the samples (268 MB for a 1024 ->
    2048 1 x 1 stride-2 convolution at B = 8), and is wrong for groups > 1
    with stride 2 and padding."""
    if transposed:
        return NotImplemented
    n = x.dim() - 2
    stride, padding, dilation = (_tuple(v[0] if len(v) == 1 else v, n)
                                 for v in (stride, padding, dilation))
    grad_x = grad_w = grad_b = None
    kernel = weight.shape[2:]
    out = grad.shape[2:]
    if mask[0]:
        # The input's rows (columns, ...) that no window reaches get zeros.
        extra = [size + 2 * p - ((o - 1) * s + d * (k - 1) + 1)
                 for size, o, s, p, d, k in zip(x.shape[2:], out, stride,
                                                padding, dilation, kernel)]
        grad_x = transposed_convolution(grad, weight, None, stride, padding,
                                        extra, groups, dilation)
    if mask[1]:
        grad_w = weight_gradient(grad, x, kernel, stride, padding, dilation,
                                 groups)
    if mask[2]:
        grad_b = grad.sum([0] + list(range(2, n + 2)))
    return grad_x, grad_w, grad_b


def weight_gradient(grad, x, kernel, stride, padding, dilation, groups):
    """The weight gradient [C_out, C_in/G, *kernel] of a convolution of x
    [B, C_in, *spatial] whose output gradient is grad [B, C_out, *out], as
    one forward convolution per group with the samples as the reduced
    channels: the padded input, cut to the part that the windows read
    ([C_in/G, G * B, *read]), convolved with the output gradient as the
    filter ([C_out, B, *out]) with stride and dilation exchanged, gives
    [C_in/G, C_out, *kernel] exactly (no position outside the kernel is
    computed)."""
    n = len(kernel)
    b, c = x.shape[:2]
    cout = grad.shape[1]
    cg, og = c // groups, cout // groups
    out = grad.shape[2:]
    read = [(o - 1) * s + d * (k - 1) + 1
            for o, s, d, k in zip(out, stride, dilation, kernel)]
    # Padded, then cut to what is read (a stride-2 convolution of an even
    # image leaves the last row unread).
    xp = _pad(x, [(p, r - p - size) for p, r, size in
                  zip(padding, read, x.shape[2:])])
    spatial = list(range(3, 3 + n))
    xs = xp.reshape(b, groups, cg, *read).permute(2, 1, 0, *spatial)
    xs = xs.reshape(cg, groups * b, *read)
    gs = grad.reshape(b, groups, og, *out).permute(1, 2, 0, *spatial)
    gs = gs.reshape(cout, b, *out)
    grad_w = torch.ops.aten.convolution(xs, gs, None, list(dilation),
                                        [0] * n, list(stride), False,
                                        [0] * n, groups)
    return grad_w.transpose(0, 1)


def grouped_convolution(x, weight, bias, stride, padding, dilation, groups):
    """F.convNd(x, weight, bias, stride, padding, dilation, groups) for any
    number of groups: 2-d as PyTorch's own op (whose backward the trace
    decomposes by convolution_backward), else from slices, products and
    sums."""
    n = weight.dim() - 2
    batched = x.dim() == n + 2
    if not batched:
        x = x.unsqueeze(0)
    kernel = weight.shape[2:]
    stride, dilation = _tuple(stride, n), _tuple(dilation, n)
    if padding == "valid":
        pads = [(0, 0)] * n
    elif padding == "same":
        pads = _same_padding(kernel, dilation)
    else:
        pads = [(p, p) for p in _tuple(padding, n)]
    if n == 2:
        # PyTorch's own op; its backward is convolution_backward.
        symmetric = all(p == q for p, q in pads)
        if not symmetric:
            x = _pad(x, pads)
        y = torch.ops.aten.convolution(
            x, weight, bias, list(stride),
            [p for p, _ in pads] if symmetric else [0, 0], list(dilation),
            False, [0, 0], groups)
        return y if batched else y.squeeze(0)
    x = _pad(x, pads)
    b, c = x.shape[:2]
    cout, cg = weight.shape[:2]
    og = cout // groups
    k = 1
    for size in kernel:
        k *= size
    windows, out = _windows(x, kernel, stride, dilation)  # [B, C, K, *out]
    p = 1
    for size in out:
        p *= size
    windows = windows.reshape(b, groups, cg, k, p)
    w = weight.reshape(groups, og, cg, k)
    if cg == 1:
        # Depthwise: [B, G, 1, K, P] * [G, Og, K, 1], summed over K.
        y = (windows * w.reshape(groups, og, k, 1)).sum(3)
    else:
        # [B, G, P, Cg*K] @ [G, Cg*K, Og]: a batched product, B outermost.
        cols = windows.reshape(b, groups, cg * k, p).transpose(2, 3)
        y = torch.matmul(cols, w.reshape(groups, og, cg * k).transpose(1, 2))
        y = y.transpose(2, 3)  # [B, G, Og, P]
    y = y.reshape(b, cout, *out)
    if bias is not None:
        y = y + bias.reshape(cout, *([1] * n))
    return y if batched else y.squeeze(0)


def transposed_convolution(x, weight, bias, stride, padding, output_padding,
                           groups, dilation):
    """F.conv_transposeNd (and the input gradient of a convolution) by
    phases (see the module's docstring): no zeros between the input's
    elements, so nothing larger than the input and the output is held
    beyond the stride-1 convolutions' own windows."""
    n = weight.dim() - 2
    batched = x.dim() == n + 2
    if not batched:
        x = x.unsqueeze(0)
    stride, padding = _tuple(stride, n), _tuple(padding, n)
    output_padding, dilation = _tuple(output_padding, n), _tuple(dilation, n)
    kernel = weight.shape[2:]
    b, cin = x.shape[:2]
    # weight [Cin, Cout/G, *k] -> [Cout, Cin/G, *k], a convolution's.
    og = weight.shape[1]
    w = weight.reshape(groups, cin // groups, og, *kernel).transpose(1, 2)
    w = w.reshape(groups * og, cin // groups, *kernel)
    # The output before its padding is cut, and each phase's rows (the
    # largest phase's count, for all: the extra rows are cut).
    full = [(i - 1) * st + d * (k - 1) + 1 + op for i, st, d, k, op in
            zip(x.shape[2:], stride, dilation, kernel, output_padding)]
    rows = [-(-f // st) for f, st in zip(full, stride)]
    phases = [_phase(x, w, phase, stride, dilation, rows, groups)
              for phase in itertools.product(*(range(st) for st in stride))]
    # [B, Cout, *stride, *rows] -> [B, Cout, rows_1, stride_1, ...].
    y = torch.stack(phases, 2).reshape(b, groups * og, *stride, *rows)
    y = y.permute(0, 1, *itertools.chain.from_iterable(
        (2 + n + i, 2 + i) for i in range(n)))
    y = y.reshape(b, groups * og, *[m * st for m, st in zip(rows, stride)])
    y = y[(slice(None), slice(None)) + tuple(
        slice(p, f - p) for p, f in zip(padding, full))]
    if bias is not None:
        y = y + bias.reshape(-1, *([1] * n))
    return y if batched else y.squeeze(0)


def _phase(x, w, phase, stride, dilation, rows, groups):
    """The output positions phase + stride * m (m < rows) of the transposed
    convolution of x [B, Cin, *in] by w (a convolution's weight [Cout,
    Cin/G, *k]): along each dimension only the taps t with t * dilation =
    phase (mod stride) reach them, every stride / gcd-th tap, each shifted
    by dilation / gcd input positions from the last: a stride-1 convolution
    with that dilation of x padded, by those taps flipped."""
    index, pads, dilations = [slice(None), slice(None)], [], []
    for r, st, d, k, m, i in zip(phase, stride, dilation, w.shape[2:], rows,
                                 x.shape[2:]):
        taps = [t for t in range(k) if t * d % st == r]
        if not taps:  # no tap reaches these positions: zeros
            return x.new_zeros(x.shape[0], w.shape[0], *rows)
        g = math.gcd(st, d)
        step, shift = st // g, d // g
        first = (taps[0] * d - r) // st
        left = first + (len(taps) - 1) * shift
        index.append(slice(taps[0], None, step))
        pads.append((left, m - i - first))
        dilations.append(shift)
    ws = w[tuple(index)].flip(list(range(2, w.dim())))
    xs = _pad(x, pads)
    if groups == 1 or w.dim() == 4:
        return torch.ops.aten.convolution(
            xs, ws, None, [1] * len(pads), [0] * len(pads), dilations, False,
            [0] * len(pads), groups)
    return _conv(xs, ws, None, 1, 0, dilations, groups)


def _conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return grouped_convolution(x, weight, bias, stride, padding, dilation,
                               groups)


def _conv_transpose(x, weight, bias=None, stride=1, padding=0,
                    output_padding=0, groups=1, dilation=1):
    return transposed_convolution(x, weight, bias, stride, padding,
                                  output_padding, groups, dilation)


def adaptive_average(x, output_size):
    """F.adaptive_avg_pool2d whose windows tile the input, as a mean over
    the windows (PyTorch's kernel restrides a channels-last input's 1x1
    result in place with as_strided_, which functionalization turns into an
    as_strided_scatter that torch-mlir does not lower); None when the
    windows overlap."""
    oh, ow = _tuple(output_size, 2)
    h, w = x.shape[-2:]
    oh, ow = oh or h, ow or w
    if h % oh or w % ow:
        return None
    lead = x.shape[:-2]
    return x.reshape(*lead, oh, h // oh, ow, w // ow).mean((-3, -1))


_CONVOLUTIONS = {torch.conv1d, torch.conv2d, torch.conv3d}
_TRANSPOSED = {torch.conv_transpose1d, torch.conv_transpose2d,
               torch.conv_transpose3d}


class ConvolutionForms(TorchFunctionMode):
    """While tracing: grouped and transposed convolutions, and adaptive
    average pooling with tiling windows, as the forms above (the others go
    to PyTorch's own op)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _CONVOLUTIONS:
            groups = kwargs.get("groups", args[6] if len(args) > 6 else 1)
            if groups != 1:
                return _conv(*args, **kwargs)
        elif func in _TRANSPOSED:
            return _conv_transpose(*args, **kwargs)
        elif func is F.adaptive_avg_pool2d:
            out = adaptive_average(*args, **kwargs)
            if out is not None:
                return out
        return func(*args, **kwargs)
