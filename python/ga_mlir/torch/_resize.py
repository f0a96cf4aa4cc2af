"""Bilinear resizing for tracing: torch-mlir lowers neither
aten.upsample_bilinear2d to a size (F.interpolate(mode="bilinear"),
Segformer's decode head, BEiT's relative position bias table) nor its
backward, so any model that resized a tensor bilinearly was refused.

Bilinear resizing is separable: out = A_h @ x @ A_w^T per image, where
A_h [H_out, H_in] holds each output row's two weights at its two source
rows (PyTorch's source index and weights, computed as its kernel does, in
the input's arithmetic type). The gradient of x is then
A_h^T @ grad @ A_w: two products with constant matrices, each element a sum
of the same terms as PyTorch's scatter of the weighted gradients (in
another order); the forward's elements are PyTorch's sums of four weighted
neighbours, rounded in another order (rows, then columns)."""

import numpy
import torch

aten = torch.ops.aten


def _weights(size_in, size_out, align_corners, scale, dtype):
    """A [size_out, size_in] (numpy, `dtype`): PyTorch's linear
    interpolation weights (area_pixel_compute_scale and
    area_pixel_compute_source_index of its upsampling kernels)."""
    one = dtype.type(1)
    if align_corners:
        ratio = dtype.type(size_in - 1) / dtype.type(size_out - 1) \
            if size_out > 1 else dtype.type(0)
    elif scale is not None and scale > 0:
        ratio = dtype.type(1.0 / scale)
    else:
        ratio = dtype.type(size_in) / dtype.type(size_out)
    out = numpy.arange(size_out).astype(dtype)
    if align_corners:
        source = ratio * out
    else:
        source = numpy.maximum(ratio * (out + dtype.type(0.5)) -
                               dtype.type(0.5), dtype.type(0))
    first = source.astype(numpy.int64)  # source >= 0: the floor
    frac = numpy.clip(source - first.astype(dtype), 0, 1).astype(dtype)
    second = numpy.where(first < size_in - 1, first + 1, first)
    a = numpy.zeros((size_out, size_in), dtype)
    rows = numpy.arange(size_out)
    numpy.add.at(a, (rows, first), one - frac)
    numpy.add.at(a, (rows, second), frac)
    return a


def _matrices(dtype, sizes_in, sizes_out, align_corners, scales):
    """(A_h, A_w) as torch tensors of `dtype`, or None for a type other
    than float32 and float64: PyTorch's weights are in the op's arithmetic
    type (float for bfloat16 and float16, which the products would round),
    so those are left to torch-mlir (which refuses them)."""
    kind = {torch.float32: numpy.float32,
            torch.float64: numpy.float64}.get(dtype)
    if kind is None:
        return None
    return [torch.from_numpy(_weights(i, o, align_corners, s,
                                      numpy.dtype(kind))).to(dtype)
            for i, o, s in zip(sizes_in, sizes_out, scales)]


def _upsample_bilinear2d(self, output_size, align_corners, scales_h=None,
                         scales_w=None):
    """aten.upsample_bilinear2d: A_h @ self @ A_w^T."""
    if self.dim() != 4:
        return NotImplemented
    a = _matrices(self.dtype, self.shape[2:], output_size, align_corners,
                  (scales_h, scales_w))
    if a is None:
        return NotImplemented
    rows = self @ a[1].t()  # [N, C, H_in, W_out]
    return (rows.transpose(-1, -2) @ a[0].t()).transpose(-1, -2)


def _upsample_bilinear2d_backward(grad_output, output_size, input_size,
                                  align_corners, scales_h=None,
                                  scales_w=None):
    """aten.upsample_bilinear2d_backward: A_h^T @ grad_output @ A_w."""
    if len(input_size) != 4:
        return NotImplemented
    a = _matrices(grad_output.dtype, input_size[2:], output_size,
                  align_corners, (scales_h, scales_w))
    if a is None:
        return NotImplemented
    a_h, a_w = a
    rows = grad_output @ a_w  # [N, C, H_out, W_in]
    return (rows.transpose(-1, -2) @ a_h).transpose(-1, -2)


def register(table):
    """Adds the decompositions of this module to a trace's table."""
    table[aten.upsample_bilinear2d.default] = _upsample_bilinear2d
    table[aten.upsample_bilinear2d_backward.default] = \
        _upsample_bilinear2d_backward
