# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# torch.roll, the accumulating write by one index tensor (index_add, the
# backward of table[idx]) and as_strided_scatter as the trace decomposes
# them: roll as slices and a concatenation, the write as a product with the
# indices' one-hot rows, as_strided_scatter as slice_scatters. First the
# decompositions against PyTorch's ops (roll and as_strided_scatter bit for
# bit; the write within rounding of PyTorch's sequential sums, with
# repeated and negative indices, at dimension 0 and 1, broadcast values);
# then a step that rolls per-sample features, reads a table of biases by a
# buffer of indices, index_adds per-sample values and zeroes part of a
# cloned bias in place, against PyTorch's step.

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo
from ga_mlir.torch import _rearrange

torch.manual_seed(0)
x = torch.randn(3, 5, 4)
checked = differ = 0
for shifts, dims in [(1, 0), (-2, 1), (7, 2), (0, 1), ((2, -1), (1, 2)),
                     ((-6, 3, 1), (0, 1, 2)), (3, ()), (-8, ())]:
    expected = torch.roll(x, shifts, dims)
    got = _rearrange._roll(x, shifts, dims)
    checked += 1
    if not torch.equal(got, expected):
        differ += 1
        print(f"roll differs: shifts {shifts} dims {dims}")
print(f"roll: {checked} cases, {differ} differ")
# CHECK: roll: 8 cases, 0 differ
failures = differ

checked = differ = 0
for dim, index, value_shape in [
        (0, [0, 2, 2, -1, 1, 2], None), (1, [[3, 0], [3, 3]], None),
        (1, [4, -5, 0], (1, 1, 1)), (0, [1], None)]:
    base = torch.randn(5, 6, 2)
    index = torch.tensor(index)
    indices = [None] * dim + [index]
    shape = base.shape[:dim] + index.shape + base.shape[dim + 1:]
    values = torch.randn(value_shape or shape)
    expected = torch.ops.aten.index_put(base, indices, values, True)
    got = _rearrange._index_put(base, indices, values, accumulate=True)
    checked += 1
    if not torch.allclose(got, expected, rtol=1e-6, atol=1e-6):
        differ += 1
        print(f"index_put differs: dim {dim} index {index.tolist()}")
print(f"index_put: {checked} cases, {differ} differ")
# CHECK: index_put: 4 cases, 0 differ
failures += differ
# Left to other decompositions: without accumulation, two index tensors.
print("left:", _rearrange._index_put(base, [index], values) is NotImplemented,
      _rearrange._index_put(base, [index, index], values, True)
      is NotImplemented)
# CHECK: left: True True

# as_strided_scatter (the backward of an in-place write into a view) on a
# contiguous tensor as slice_scatters, bit for bit: views along several
# dimensions with steps, a size-1 dimension, transposed strides, a flat view
# across rows; views that are not a slicing (one that overlaps itself, one
# across rows whose rows differ in length) are left to torch-mlir.
x = torch.randn(4, 6, 5)
checked = differ = left = 0
for size, stride, offset in [((2, 3), (30, 5), 7), ((3,), (1,), 2),
                             ((5, 2), (1, 60), 0), ((2, 1, 3), (60, 1, 10), 1),
                             ((120,), (1,), 0), ((10,), (3,), 1),
                             ((4, 5), (30, 1), 6), ((2, 2), (2, 1), 0)]:
    src = torch.randn(size)
    expected = torch.as_strided_scatter(x, src, size, stride, offset)
    got = _rearrange._as_strided_scatter(x, src, size, stride, offset)
    if got is NotImplemented:
        left += 1
        continue
    checked += 1
    if not torch.equal(got, expected):
        differ += 1
        print(f"as_strided_scatter differs: {size} {stride} {offset}")
print(f"as_strided_scatter: {checked} cases, {differ} differ, {left} left")
# CHECK: as_strided_scatter: 6 cases, 0 differ, 2 left
failures += differ


class Shifted(nn.Module):
    """Features rolled along two dimensions, a bias table read by a buffer
    of indices (with repeats), an index_add into 4 slots, and a bias whose
    middle third is zeroed in place on a clone (as Swin V2 zeroes its key
    bias: as_strided_scatter in the backward)."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 6)
        self.table = nn.Parameter(torch.randn(7, 6))
        self.register_buffer("where", torch.tensor([0, 3, 3, 6, 1]))
        self.fc = nn.Linear(4 * 6, 3)

    def forward(self, x):  # [B, 5, 6]
        bias = self.inp.bias.clone()
        bias[2:4].zero_()
        h = torch.roll(F.linear(x, self.inp.weight, bias), (2, -1), (1, 2)) \
            + self.table[self.where]
        slots = h.new_zeros(h.shape[0], 4, 6).index_add(
            1, torch.tensor([0, 2, 2, 3, 1]), h.tanh())
        return self.fc(slots.flatten(1))


def batch(gen, b=7):
    return (torch.randn(b, 5, 6, generator=gen),
            torch.randint(0, 3, (b,), generator=gen))


failures += zoo.check("rearrange", Shifted, batch, zoo.classification_loss,
                      optimizers=("sgd",), ns=(3,), steps=2)
# CHECK: rearrange sgd N=3: {{.*}} OK
sys.exit(failures)
