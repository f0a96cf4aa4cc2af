"""The gaCublasLtMatmul ABI (lib/Runtime/CUDA/GACublasLt.h) of
libga_cublaslt_cpu.so against numpy in float64.

usage: cublaslt_abi_oracle.py LIB SEED...

For every seed, random calls of gaCublasLtMatmul and
gaCublasLtMatmulStridedBatched on row-major matrices as the lowered code
passes them: both transposes, leading dimensions wider than a row, operands
that start inside a larger buffer, batch strides wider than a matrix, beta 0
and 1 (and others), alpha, a bias, f32/f16/bf16 inputs into f32 or into the
input type. The expected C is computed in float64 from the stored values; the
padding around every matrix must be left as it was. Prints one line per seed
and exits 1 on the first mismatch.
"""
import ctypes
import sys

import numpy as np

F32, F16, BF16 = 0, 2, 14


def to_bf16_bits(x):
    """float32 -> bf16 bits, rounded to nearest even."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16).astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class Buffer:
    """A flat buffer of one ABI element type, with its float64 view."""

    def __init__(self, rng, size, dtype):
        self.dtype = dtype
        values = rng.standard_normal(size).astype(np.float32)
        if dtype == F32:
            self.raw = values
        elif dtype == F16:
            self.raw = values.astype(np.float16)
        else:
            self.raw = to_bf16_bits(values)

    def values(self):
        if self.dtype == BF16:
            return from_bf16_bits(self.raw).astype(np.float64)
        return self.raw.astype(np.float64)

    def pointer(self, offset):
        return ctypes.c_void_p(self.raw.ctypes.data + offset * self.raw.itemsize)


def matrix(flat, offset, rows, cols, ld, batch, stride):
    """The row-major matrices [batch][rows][cols] stored in `flat`."""
    return np.stack([
        np.stack([flat[offset + p * stride + i * ld:
                       offset + p * stride + i * ld + cols] for i in range(rows)])
        if rows else np.zeros((0, cols)) for p in range(batch)])


def stored_size(offset, rows, ld, batch, stride):
    return offset + (batch - 1) * stride + rows * ld + 3


def one_call(lib, rng, batched):
    m, n, k = (int(v) for v in rng.integers(1, 10, size=3))
    if rng.random() < 0.1:
        k = 0  # an empty sum: C = beta C (+ bias)
    trans_a, trans_b = (int(v) for v in rng.integers(0, 2, size=2))
    ab_type = int(rng.choice([F32, F16, BF16]))
    c_type = F32 if rng.random() < 0.7 else ab_type
    alpha = float(rng.choice([1.0, 1.0, 0.75]))
    beta = float(rng.choice([0.0, 1.0, 1.0, 0.5]))
    batch = int(rng.integers(1, 4)) if batched else 1
    # Stored (row-major) shapes, leading dimensions, offsets, batch strides.
    a_rows, a_cols = (k, m) if trans_a else (m, k)
    b_rows, b_cols = (n, k) if trans_b else (k, n)
    shapes = {}
    for name, rows, cols in (("a", a_rows, a_cols), ("b", b_rows, b_cols),
                             ("c", m, n)):
        ld = max(1, cols) + int(rng.integers(0, 3))
        offset = int(rng.integers(0, 5))
        stride = rows * ld + int(rng.integers(0, 4)) if batched else 0
        shapes[name] = (rows, cols, ld, offset, stride)
    bufs = {}
    for name, (rows, cols, ld, offset, stride) in shapes.items():
        dtype = c_type if name == "c" else ab_type
        bufs[name] = Buffer(rng, stored_size(offset, rows, ld, batch, stride), dtype)
    bias = None
    if not batched and rng.random() < 0.4:
        bias = Buffer(rng, n + 2, c_type)
    before = {name: buf.values().copy() for name, buf in bufs.items()}

    def view(name):
        rows, cols, ld, offset, stride = shapes[name]
        return matrix(before[name], offset, rows, cols, ld, batch, stride)

    a, b, c = view("a"), view("b"), view("c")
    op_a = a.transpose(0, 2, 1) if trans_a else a
    op_b = b.transpose(0, 2, 1) if trans_b else b
    expected = alpha * (op_a @ op_b) + beta * c
    if bias is not None:
        expected = expected + bias.values()[:n][None, None, :]

    ptr = {name: bufs[name].pointer(shapes[name][3]) for name in bufs}
    ld = {name: shapes[name][2] for name in shapes}
    stride = {name: shapes[name][4] for name in shapes}
    if batched:
        lib.gaCublasLtMatmulStridedBatched(
            None, trans_a, trans_b, m, n, k, ptr["a"], ld["a"], stride["a"],
            ptr["b"], ld["b"], stride["b"], ptr["c"], ld["c"], stride["c"],
            batch, ab_type, c_type, ctypes.c_float(alpha), ctypes.c_float(beta))
    else:
        lib.gaCublasLtMatmul(
            None, trans_a, trans_b, m, n, k, ptr["a"], ld["a"], ptr["b"],
            ld["b"], ptr["c"], ld["c"], ab_type, c_type, ctypes.c_float(alpha),
            ctypes.c_float(beta), bias.pointer(0) if bias is not None else None)

    after = bufs["c"].values()
    rows, cols, ldc, offc, stc = shapes["c"]
    got = matrix(after, offc, rows, cols, ldc, batch, stc)
    # Error bound: fp32 accumulation over k terms, plus the final rounding to
    # C's type (f16/bf16 outputs).
    scale = (abs(alpha) * (np.abs(op_a) @ np.abs(op_b)) + abs(beta) * np.abs(c)
             + (np.abs(bias.values()[:n])[None, None, :] if bias is not None else 0))
    eps = {F32: 2.0**-24, F16: 2.0**-11, BF16: 2.0**-8}[c_type]
    bound = (k + 3) * 2.0**-24 * scale + eps * np.abs(expected) + 1e-30
    what = (f"batched={batched} m={m} n={n} k={k} transA={trans_a} transB={trans_b} "
            f"ab={ab_type} c={c_type} alpha={alpha} beta={beta} batch={batch} "
            f"bias={bias is not None} shapes={shapes}")
    err = np.abs(got - expected)
    if not np.all(err <= bound):
        idx = np.unravel_index(np.argmax(err - bound), err.shape)
        sys.exit(f"FAIL: {what}: C{list(idx)} = {got[idx]}, expected {expected[idx]}")
    # Everything outside the matrices of C is untouched.
    mask = np.ones(after.shape, dtype=bool)
    for p in range(batch):
        for i in range(rows):
            start = offc + p * stc + i * ldc
            mask[start:start + cols] = False
    if not np.array_equal(after[mask], before["c"][mask]):
        sys.exit(f"FAIL: {what}: wrote outside C")
    for name in ("a", "b"):
        if not np.array_equal(bufs[name].values(), before[name]):
            sys.exit(f"FAIL: {what}: wrote into {name.upper()}")
    return ab_type, c_type, beta, bias is not None


def main():
    lib = ctypes.CDLL(sys.argv[1])
    i32, i64, ptr, f32 = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p, ctypes.c_float
    lib.gaCublasLtMatmul.argtypes = [ptr, i32, i32, i64, i64, i64, ptr, i64, ptr, i64,
                                     ptr, i64, i32, i32, f32, f32, ptr]
    lib.gaCublasLtMatmulStridedBatched.argtypes = [
        ptr, i32, i32, i64, i64, i64, ptr, i64, i64, ptr, i64, i64, ptr, i64, i64,
        i64, i32, i32, f32, f32]
    for seed in (int(s) for s in sys.argv[2:]):
        rng = np.random.default_rng(seed)
        seen = set()
        for call in range(200):
            seen.add(one_call(lib, rng, batched=call % 2 == 1))
        betas = sorted({b for _, _, b, _ in seen})
        print(f"seed {seed}: 200 calls match (type pairs "
              f"{len({(a, c) for a, c, _, _ in seen})}, betas {betas}, "
              f"bias {any(x for *_, x in seen)})")


if __name__ == "__main__":
    main()
