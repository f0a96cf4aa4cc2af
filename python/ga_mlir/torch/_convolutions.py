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
              PyTorch defines it: the input with stride - 1 zeros between
              elements, padded by dilation * (kernel - 1) - padding (plus
              output_padding at the end), convolved with stride 1 with the
              weight flipped along its spatial dimensions and its two
              channel dimensions swapped per group.

Each output element is the same sum of products as PyTorch's (in another
order: within rounding)."""

import itertools

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


def grouped_backward(grad, x, weight, bias_sizes, stride, padding,
                     dilation, transposed, output_padding, groups, mask):
    """aten.convolution_backward of a 2-d convolution with groups > 1 (a
    decomposition for the trace; NotImplemented otherwise) as forward
    grouped convolutions, which torch-mlir lowers
    (linalg.depthwise_conv_2d_nchw_chw, linalg.conv_2d_ngchw_gfchw; its own
    lowering of this op fails or is wrong for groups > 1):

      input gradient:  the transposed convolution of the output gradient
                       (transposed_convolution: stride - 1 zeros between its
                       elements, padded, convolved with stride 1 with the
                       weight flipped and its channels swapped per group);
      weight gradient: per group, the padded input (samples as its
                       channels) convolved with the output gradient (samples
                       as its channels) with stride and dilation exchanged,
                       cut to the kernel size.
    """
    if groups == 1 or transposed or weight.dim() != 4 or x.dim() != 4:
        return NotImplemented
    grad_x = grad_w = grad_b = None
    b, c, h, w = x.shape
    cout, cg, kh, kw = weight.shape
    og = cout // groups
    out = grad.shape[2:]
    if mask[0]:
        # The rows and columns of x that no window reaches get zeros.
        extra = [size + 2 * p - ((o - 1) * s + d * (k - 1) + 1)
                 for size, o, s, p, d, k in zip((h, w), out, stride, padding,
                                                dilation, (kh, kw))]
        grad_x = transposed_convolution(grad, weight, None, stride, padding,
                                        extra, groups, dilation)
    if mask[1]:
        xp = _pad(x, [(p, p) for p in padding])
        hp, wp = xp.shape[2:]
        # [cg, G * B, Hp, Wp] (*) [G * og, B, Ho, Wo], G groups.
        xs = xp.reshape(b, groups, cg, hp, wp).permute(2, 1, 0, 3, 4)
        xs = xs.reshape(cg, groups * b, hp, wp)
        gs = grad.reshape(b, groups, og, *out).permute(1, 2, 0, 3, 4)
        gs = gs.reshape(cout, b, *out)
        full = torch.ops.aten.convolution(xs, gs, None, dilation, [0, 0],
                                          stride, False, [0, 0], groups)
        grad_w = full[:, :, :kh, :kw].transpose(0, 1)
    if mask[2]:
        grad_b = grad.sum((0, 2, 3))
    return grad_x, grad_w, grad_b


def grouped_convolution(x, weight, bias, stride, padding, dilation, groups):
    """F.convNd(x, weight, bias, stride, padding, dilation, groups) for any
    number of groups: 2-d as PyTorch's own op (whose backward the trace
    decomposes by grouped_backward), else from slices, products and sums."""
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
        # PyTorch's own op; its backward is grouped_backward.
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
    """F.conv_transposeNd as a convolution with stride 1 of the input with
    zeros inserted (see the module's docstring)."""
    n = weight.dim() - 2
    batched = x.dim() == n + 2
    if not batched:
        x = x.unsqueeze(0)
    stride, padding = _tuple(stride, n), _tuple(padding, n)
    output_padding, dilation = _tuple(output_padding, n), _tuple(dilation, n)
    kernel = weight.shape[2:]
    b, cin = x.shape[:2]
    spatial = x.shape[2:]
    # stride - 1 zeros after each element: [.., s, 1] padded to [.., s, st].
    if any(st > 1 for st in stride):
        view, pads = [b, cin], []
        for s, st in zip(spatial, stride):
            view += [s, 1]
            pads += [(0, 0), (0, st - 1)]
        x = _pad(x.reshape(view), pads)
        x = x.reshape([b, cin] + [s * st for s, st in zip(spatial, stride)])
        x = x[(slice(None), slice(None)) + tuple(
            slice(0, (s - 1) * st + 1) for s, st in zip(spatial, stride))]
    x = _pad(x, [(d * (k - 1) - p, d * (k - 1) - p + op) for k, p, op, d in
                 zip(kernel, padding, output_padding, dilation)])
    # weight [Cin, Cout/G, *k] -> [Cout, Cin/G, *k], flipped.
    og = weight.shape[1]
    w = weight.reshape(groups, cin // groups, og, *kernel).transpose(1, 2)
    w = w.reshape(groups * og, cin // groups, *kernel).flip(
        list(range(2, 2 + n)))
    if groups > 1:
        y = _conv(x, w, bias, 1, 0, dilation, groups)
    else:
        conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
        y = conv(x, w, bias, 1, 0, dilation, 1)
    return y if batched else y.squeeze(0)


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
