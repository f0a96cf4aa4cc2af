"""Decompositions of ATen ops for tracing: PyTorch's core ATen
decompositions, with the gathers and scatters of indexing ops (nll_loss,
embedding, max pooling) replaced by comparisons with an iota, which
--ga-accumulate rewrites exactly, and ops torch-mlir cannot lower."""

import torch

from ._common import CompileError
from ._convolutions import (convolution_backward, expanded_backward,
                            expanded_convolution)
from ._gathers import scatter_decompositions
from ._locations import current_step_line
from . import _routing, _pooling, _rearrange, _resize
from ._attention import attention_decompositions


aten = torch.ops.aten


def _one_hot(target, num_classes, dim):
    """`target` compared with an iota along a new dimension `dim` (bool)."""
    shape = [1] * (target.dim() + 1)
    shape[dim] = num_classes
    classes = torch.arange(num_classes, device=target.device).view(shape)
    return target.unsqueeze(dim) == classes


def _nll_loss_forward(self, target, weight, reduction, ignore_index):
    """aten.nll_loss_forward with PyTorch's exact semantics (ignore_index,
    class weights, reductions) as a comparison with an iota and a sum over
    the classes, instead of a gather: each sum has one non-zero term."""
    channel_dim = 0 if self.dim() < 2 else 1
    num_classes = self.shape[channel_dim]
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = num_classes
        self = self * weight.view(shape)
    valid = target != ignore_index
    hot = _one_hot(target, num_classes, channel_dim)
    picked = torch.where(hot, self, 0.0).sum(channel_dim)
    result = torch.where(valid, -picked, 0.0)
    if reduction == 0 and self.dim() > 1:
        return result, self.new_zeros(())
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = num_classes
        w = weight.view(shape).expand(self.shape)
        wsum = torch.where(hot, w, 0.0).sum(channel_dim)
        total_weight = torch.where(valid, wsum, 0.0).sum()
    else:
        total_weight = valid.sum().to(self.dtype)
    if reduction == 2:
        result = result.sum()
    elif reduction == 1:
        result = result.sum() / total_weight
    return result, total_weight


def _nll_loss_backward(grad_output, self, target, weight, reduction,
                       ignore_index, total_weight):
    """aten.nll_loss_backward as a select on the comparison with an iota
    (PyTorch's decomposition scatters -1 into zeros)."""
    channel_dim = 0 if self.dim() < 2 else 1
    num_classes = self.shape[channel_dim]
    if reduction == 1:
        grad_output = grad_output / total_weight
    if self.dim() == 1 and target.dim() > 0:
        target = target[0]
    hot = _one_hot(target, num_classes, channel_dim)
    grad_input = torch.where(hot, -1.0, 0.0).to(self.dtype)
    target = target.unsqueeze(channel_dim)
    if grad_input.dim() > grad_output.dim() > 0:
        grad_output = grad_output.unsqueeze(channel_dim)
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = num_classes
        grad_output = grad_output * weight.reshape(shape)
    grad_output = torch.where(target != ignore_index, grad_output, 0)
    return grad_input * grad_output


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False,
               sparse=False):
    """aten.embedding as a product of the one-hot rows with the table: one
    non-zero term per sum, so the rows are copied exactly (finite weights)."""
    hot = _one_hot(indices, weight.shape[0], indices.dim()).to(weight.dtype)
    return torch.matmul(hot, weight)


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """aten.embedding_dense_backward as a product of the transposed one-hot
    rows with the output gradient (PyTorch's decomposition is an index_put
    with accumulation, a scatter)."""
    if scale_grad_by_freq:
        raise CompileError(
            f"{current_step_line('nn.Embedding')}: error: "
            "nn.Embedding(scale_grad_by_freq=True) is not supported: its "
            "gradient divides each row by how often its index occurs in the "
            "whole batch, which micro-batches cannot count; use "
            "scale_grad_by_freq=False",
            code="unsupported-layer")
    valid = indices != padding_idx
    hot = _one_hot(indices, num_weights, indices.dim())
    hot = (hot & valid.unsqueeze(-1)).to(grad_output.dtype)
    dim = grad_output.shape[-1]
    return torch.matmul(hot.reshape(-1, num_weights).t(),
                        grad_output.reshape(-1, dim))


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v) * (2 // len(v))


def _tiles(self, kernel, stride, padding, dilation=1, ceil_mode=False):
    """Whether 2-d pooling windows tile the input exactly (no overlap, no
    padding, nothing left over)."""
    kernel, stride = _pair(kernel), _pair(stride or kernel)
    return (stride == kernel and _pair(padding) == (0, 0) and
            _pair(dilation) == (1, 1) and not ceil_mode and
            self.shape[-2] % kernel[0] == 0 and
            self.shape[-1] % kernel[1] == 0)


def _upsample(t, kernel):
    """Each element of the last two dimensions repeated kernel times."""
    kh, kw = _pair(kernel)
    *lead, h, w = t.shape
    return t.reshape(*lead, h, 1, w, 1).expand(*lead, h, kh, w, kw).reshape(
        *lead, h * kh, w * kw)


def _max_pool2d_with_indices(self, kernel_size, stride=(), padding=0,
                             dilation=1, ceil_mode=False):
    """max_pool2d with the flat input index of each window's maximum, as
    PyTorch's kernel records it, from strided slices of the input and a max
    over the window (_pooling.max_pool_with_indices; torch-mlir computes the
    indices with a gather inside a linalg body)."""
    return _pooling.max_pool_with_indices(self, 2, kernel_size, stride,
                                          padding, dilation, ceil_mode)


def _max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
                                      padding, dilation, ceil_mode, indices):
    """The gradient goes to the input position the forward recorded in
    `indices` (the first maximum of the window, as PyTorch's kernel picks
    it), as a comparison of the indices with the positions of the windows
    (PyTorch's decomposition is a scatter-add): for tiling windows, with
    the indices repeated over each window; otherwise one window-sized term
    per kernel position (_pooling.max_pool_with_indices_backward)."""
    h, w = self.shape[-2:]
    if _tiles(self, kernel_size, stride, padding, dilation, ceil_mode):
        positions = torch.arange(h * w, device=self.device)
        hit = _upsample(indices, kernel_size) == positions.view(h, w)
        return torch.where(hit, _upsample(grad_output, kernel_size), 0.0)
    return _pooling.max_pool_with_indices_backward(
        grad_output, self, 2, kernel_size, stride, padding, dilation,
        ceil_mode, indices)


def _avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """Windows that tile the input: torch-mlir's pooling; others:
    _pooling.avg_pool2d (padding, overlap, ceil_mode)."""
    if _tiles(self, kernel_size, stride, padding, 1, ceil_mode):
        return NotImplemented
    return _pooling.avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override)


def _avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
                         ceil_mode, count_include_pad, divisor_override):
    """Windows that tile the input: each input element gets its window's
    gradient divided by the window size, as PyTorch's kernel computes it;
    other windows: _pooling.avg_pool2d_backward."""
    if not _tiles(self, kernel_size, stride, padding, 1, ceil_mode):
        return _pooling.avg_pool2d_backward(
            grad_output, self, kernel_size, stride, padding, ceil_mode,
            count_include_pad, divisor_override)
    kh, kw = _pair(kernel_size)
    divisor = divisor_override or kh * kw
    return _upsample(grad_output, kernel_size) / divisor


def _batch_norm_no_training(input, weight, bias, running_mean, running_var,
                            momentum, eps):
    """BatchNorm in evaluation mode as PyTorch's CPU kernel computes it
    (x * alpha + beta with alpha = weight / sqrt(var + eps)); torch-mlir's
    lowering of the op fails on its empty saved statistics."""
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    alpha = 1 / torch.sqrt(running_var + eps)
    if weight is not None:
        alpha = alpha * weight
    beta = -running_mean * alpha
    if bias is not None:
        beta = bias + beta
    out = input * alpha.view(shape) + beta.view(shape)
    return out, input.new_zeros((0,)), input.new_zeros((0,))


def _native_batch_norm(input, weight, bias, running_mean, running_var,
                       training, momentum, eps):
    if training:
        return NotImplemented  # refused before tracing (_batch_norm_check)
    return _batch_norm_no_training(input, weight, bias, running_mean,
                                   running_var, momentum, eps)


def _pow_scalar(self, exponent):
    """x ** 2, x ** 3 and x ** 0.5 as PyTorch's CPU kernel computes them
    (x * x, x * x * x, sqrt); torch-mlir would emit math.fpowi, which the
    vectorized CPU lowering does not handle yet."""
    if not self.is_floating_point() or isinstance(exponent, bool):
        return NotImplemented
    if exponent == 2:
        return self * self
    if exponent == 3:
        return self * self * self
    if exponent == 0.5:
        return torch.sqrt(self)
    return NotImplemented


def _reciprocal(self):
    """aten.reciprocal (also `1 / x`) as a division: torch-mlir's lowering
    asserts a non-zero divisor inside the element loop (an abort where
    PyTorch gives inf, and an op the GPU lowering cannot put in a kernel)."""
    if not self.is_floating_point():
        return NotImplemented
    return torch.div(torch.ones_like(self), self)


def _squeeze_dims(self, dims):
    """aten.squeeze.dims as a reshape (torch-mlir does not import it)."""
    if isinstance(dims, int):
        dims = [dims]
    dims = {d % max(self.dim(), 1) for d in dims}
    shape = [s for i, s in enumerate(self.shape)
             if not (i in dims and s == 1)]
    return self.reshape(shape)


def _empty_permuted(size, physical_layout, dtype=None, layout=None,
                    device=None, pin_memory=None):
    """aten.empty_permuted (from empty_like of a tensor that is not
    contiguous, in the backward of GroupNorm or of a loss) as a contiguous
    empty tensor: its values are undefined either way, and a functional
    program does not see strides (torch-mlir does not lower the op)."""
    return torch.empty(list(size), dtype=dtype, device=device)


def one_hot(self, num_classes=-1):
    """F.one_hot with a given number of classes as a comparison with an
    iota, put in place of F.one_hot while tracing (PyTorch's kernel reads the
    indices' minimum and maximum to check them before any decomposition,
    which a traced step cannot do: an index out of range gives a row of
    zeros here instead of an error)."""
    if num_classes < 0:
        raise CompileError(
            f"{current_step_line('one_hot')}: error: F.one_hot without "
            "num_classes: the number of classes depends on the data; give "
            "num_classes",
            code="data-dependent-size")
    return _one_hot(self, num_classes, self.dim()).to(torch.int64)


def _copy_strided(self, stride):
    """prims.copy_strided (from the decomposition of an element-wise op on
    a tensor that is not contiguous, such as AdamW's lerp of ConvNeXt's
    gradients) as a copy: the values are the same, and a functional
    program does not see strides (torch-mlir does not lower the op)."""
    return self.clone()


def _cumsum(self, dim, dtype=None):
    """aten.cumsum as a sum under a lower-triangular comparison of iotas
    (torch-mlir lowers it to tm_tensor.scan); within rounding of PyTorch's
    sequential sum."""
    x = self.to(dtype) if dtype is not None else self
    if dtype is None and not x.is_floating_point():
        x = x.to(torch.int64)
    if x.dim() == 0:
        return x.clone()
    dim %= x.dim()
    n = x.shape[dim]
    index = torch.arange(n, device=x.device)
    lower = index.view(n, 1) >= index.view(1, n)
    terms = torch.where(lower, x.movedim(dim, -1).unsqueeze(-2), 0)
    return terms.sum(-1).movedim(-1, dim)


def _arange_start_step(start, end, step=1, *, dtype=None, layout=None,
                       device=None, pin_memory=None):
    """aten.arange.start_step of an 8-bit integer type (torch.eye's
    decomposition counts in uint8) counted in int64 and converted: the same
    values (an 8-bit arange holds only values that fit). torch-mlir's
    lowering of an 8-bit arange reports an error and then crashes the
    process (a segmentation fault in its linalg conversion), so any model
    with a torch.eye ended the user's Python. Other types: as traced."""
    if dtype not in (torch.uint8, torch.int8):
        return NotImplemented
    return aten.arange.start_step(start, end, step, dtype=torch.int64,
                                  layout=layout, device=device,
                                  pin_memory=pin_memory).to(dtype)


def _constant_pad_nd(self, pad, value=0):
    """aten.constant_pad_nd with negative amounts (the backward of a
    padding: a cut) as a slice, then the padding by the positive amounts
    (torch-mlir lowers a negative amount to a tensor.extract_slice with a
    negative offset, which does not verify)."""
    if all(p >= 0 for p in pad):
        return NotImplemented
    x = self
    for i in range(len(pad) // 2):
        dim = self.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        start = -before if before < 0 else 0
        stop = x.shape[dim] + after if after < 0 else x.shape[dim]
        x = x.narrow(dim, start, stop - start)
    positive = [max(p, 0) for p in pad]
    if any(positive):
        x = aten.constant_pad_nd.default(x, positive, value)
    return x.clone()


def _im2col(self, kernel_size, dilation, padding, stride):
    """aten.im2col (F.unfold; ConvBERT's span-based convolution) as one
    strided slice of the padded input per kernel position, stacked: the
    core decomposition reads them with an advanced index, whose backward
    is a scatter that ga-mlir refuses."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (
        kernel_size, dilation, padding, stride)
    x = self if self.dim() == 4 else self.unsqueeze(0)
    n, c, h, w = x.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    x = aten.constant_pad_nd.default(x, [pw, pw, ph, ph], 0.0)
    cols = [x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
              j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]
    out = torch.stack(cols, dim=2).reshape(n, c * kh * kw, oh * ow)
    return out if self.dim() == 4 else out.squeeze(0)


def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    """aten.col2im (im2col's backward, F.fold) with stride 1 as a sum of
    the kernel positions' blocks, each padded to its place: the core
    decomposition is a scatter with accumulation. Other strides:
    NotImplemented (the core one)."""
    (h, w), (kh, kw), (dh, dw), (ph, pw) = (
        output_size, kernel_size, dilation, padding)
    if tuple(stride) != (1, 1):
        return NotImplemented
    x = self if self.dim() == 3 else self.unsqueeze(0)
    oh = h + 2 * ph - dh * (kh - 1)
    ow = w + 2 * pw - dw * (kw - 1)
    n, c = x.shape[0], x.shape[1] // (kh * kw)
    blocks = x.reshape(n, c, kh, kw, oh, ow)
    out = None
    for i in range(kh):
        for j in range(kw):
            # Rows i*dh .. i*dh+oh-1 of the padded image, then the padding
            # cut (negative amounts: _constant_pad_nd's slice).
            placed = aten.constant_pad_nd.default(
                blocks[:, :, i, j],
                [j * dw - pw, (kw - 1 - j) * dw - pw,
                 i * dh - ph, (kh - 1 - i) * dh - ph], 0.0)
            out = placed if out is None else out + placed
    return out if self.dim() == 3 else out.squeeze(0)


def _first_implemented(first, second, args):
    """first(*args), or second(*args) where first is NotImplemented."""
    out = first(*args)
    return second(*args) if out is NotImplemented else out


def _gelu(x, approximate="none"):
    """aten.gelu with approximate="tanh" by PyTorch's own decomposition:
    torch-mlir's lowering of it scales by 0.797724 where PyTorch uses
    sqrt(2 / pi) = 0.7978846, a relative error of 2e-4 inside the tanh of
    every activation (found on Gemma's gelu_pytorch_tanh: its AdamW step
    was 10x further from float64 than PyTorch's). The exact GELU (erf)
    stays torch-mlir's."""
    if approximate != "tanh":
        return NotImplemented
    from torch._decomp import decomposition_table
    return decomposition_table[aten.gelu.default](x, approximate=approximate)


def _rrelu_with_noise(self, noise, lower=0.125, upper=1.0 / 3.0,
                      training=False, generator=None):
    """aten.rrelu_with_noise in evaluation mode: a leaky ReLU with slope
    (lower + upper) / 2, `noise` untouched. torch-mlir's lowering of its
    backward multiplies by `noise` whatever `training` says, and `noise` is
    an uninitialized buffer in evaluation mode (F.rrelu(training=False)
    moved a weight by 1.1 instead of 1e-7). In training mode the op draws
    random slopes: left in the graph, where the random-op check refuses it
    at the user's line."""
    if training:
        return NotImplemented
    return aten.leaky_relu.default(self, (lower + upper) / 2)


def _rrelu_with_noise_functional(self, noise, lower=0.125, upper=1.0 / 3.0,
                                 training=False, generator=None):
    """The functional form of aten.rrelu_with_noise (what functionalization
    traces): the result and `noise` unchanged, in evaluation mode."""
    if training:
        return NotImplemented
    return _rrelu_with_noise(self, noise, lower, upper), noise


def _rrelu_with_noise_backward(grad_output, self, noise, lower, upper,
                               training, self_is_result):
    """aten.rrelu_with_noise_backward in evaluation mode (see
    _rrelu_with_noise)."""
    if training:
        return NotImplemented
    return aten.leaky_relu_backward.default(grad_output, self,
                                            (lower + upper) / 2,
                                            self_is_result)


def _before_core(table, op, decomposition):
    """`op`'s entry of `table`: `decomposition`, and where it returns
    NotImplemented the core table's (or none)."""
    core = table.get(op, lambda *args: NotImplemented)
    table[op] = lambda *args: _first_implemented(decomposition, core, args)


def _decomposition_table(indexing):
    from torch._decomp import core_aten_decompositions
    table = dict(core_aten_decompositions())
    table[aten.squeeze.dims] = _squeeze_dims
    _rearrange.register(table)  # roll, index_put(accumulate=True)
    _pooling.register(table)  # 3-d max and average pooling
    _routing.register(table)  # topk, histc (MoE routers)
    _resize.register(table)  # bilinear resizing's backward
    # Convolutions' gradients as forward convolutions
    # (_convolutions.convolution_backward; transposed ones as before).
    _before_core(table, aten.convolution_backward.default,
                 convolution_backward)
    # One-element parameter lists written out first (padding="valid").
    _before_core(table, aten.convolution_backward.default, expanded_backward)
    _before_core(table, aten.convolution.default, expanded_convolution)
    table[aten.constant_pad_nd.default] = _constant_pad_nd
    table[aten.arange.start_step] = _arange_start_step
    table[aten.empty_permuted.default] = _empty_permuted
    table[torch.ops.prims.copy_strided.default] = _copy_strided
    table[aten.cumsum.default] = _cumsum
    table[aten.im2col.default] = _im2col
    _before_core(table, aten.col2im.default, _col2im)
    table[aten.pow.Tensor_Scalar] = _pow_scalar
    table[aten.reciprocal.default] = _reciprocal
    table[aten.gelu.default] = _gelu
    table[aten.rrelu_with_noise.default] = _rrelu_with_noise
    table[aten.rrelu_with_noise_functional.default] = \
        _rrelu_with_noise_functional
    table[aten.rrelu_with_noise_backward.default] = \
        _rrelu_with_noise_backward
    table.update(scatter_decompositions())
    # scaled_dot_product_attention's fused CPU pair (_attention).
    table.update(attention_decompositions())
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    table[aten.embedding_dense_backward.default] = _embedding_dense_backward
    table[aten.max_pool2d_with_indices_backward.default] = \
        _max_pool2d_with_indices_backward
    table[aten.avg_pool2d_backward.default] = _avg_pool2d_backward
    table[aten.avg_pool2d.default] = _avg_pool2d
    table[aten.max_pool2d_with_indices.default] = _max_pool2d_with_indices
    table[aten._native_batch_norm_legit_no_training.default] = \
        _batch_norm_no_training
    table[aten.native_batch_norm.default] = _native_batch_norm
    if indexing == "one-hot":
        table[aten.nll_loss_forward.default] = _nll_loss_forward
        table[aten.embedding.default] = _embedding
    elif indexing != "gather":
        raise CompileError(f"indexing={indexing!r}: expected 'one-hot' or "
                           "'gather'",
                           code="invalid-argument")
    return table
