# RUN: env PYTHONPATH=%ga_python_path %python %s | FileCheck %s
"""No CBLAS call that --convert-linalg-to-blas emits allocates, whichever
kernels OpenBLAS runs: on a CPU with AVX-512 its small-matrix kernel for
untransposed operands mallocs a packing buffer for some products of at most
100^3 multiply-adds, which a step's memory report cannot hold (a step
compiled to max_memory measured over its budget), and the pass leaves those
products to the loops (`avoid-allocating-kernels`).

A grid of small products (f32 and f64, every transpose, N and K around the
kernel's thresholds) goes through ga-opt; each product that became a call
is then called through libopenblas.so.0 and its allocations are counted by
libGAHeapCount.so. With AVX-512 kernels (`import ga_mlir` loads SkylakeX's
on a CPU with AVX-512) it checks as well that the products the pass kept
would have allocated: the rule is not wider than the kernel's."""

import ctypes
import itertools
import os
import re
import subprocess

from ga_mlir import _blas, steplib

steplib.preload_heap_counter()
counter = steplib.HeapCounter()
blas = _blas.load_host_blas()
# CHECK: counter True, blas True
print(f"counter {counter.active}, blas {bool(blas)}")
blas.openblas_get_corename.restype = ctypes.c_char_p
core = blas.openblas_get_corename().decode()
avx512_core = core.lower() in ("skylakex", "cooperlake", "sapphirerapids")
print("core", core)
if "OPENBLAS_CORETYPE" not in os.environ and _blas.best_core():
    assert core.lower() == _blas.best_core().lower(), (core, _blas.best_core())
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
for name, scalar in (("cblas_sgemm", ctypes.c_float),
                     ("cblas_dgemm", ctypes.c_double)):
    getattr(blas, name).restype = None
    getattr(blas, name).argtypes = [ctypes.c_int] * 6 + [
        scalar, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
        scalar, ctypes.c_void_p, ctypes.c_int]

MAPS = {(False, False): ("(m, k)", "(k, n)"), (True, False): ("(k, m)", "(k, n)"),
        (False, True): ("(m, k)", "(n, k)"), (True, True): ("(k, m)", "(n, k)")}


def products():
    """(type, m, n, k, transA, transB): the N and K thresholds of both
    element types, and M large enough to cross 100^3."""
    for ty, n_values, k_values in (
            ("f32", (1, 4, 8, 9, 12, 16, 17, 24, 25, 40), (8, 31, 32, 36, 64)),
            ("f64", (1, 3, 4, 5, 8, 12, 13), (8, 15, 16, 36))):
        for m, n, k in itertools.product((2, 6, 700), n_values, k_values):
            for ta, tb in MAPS:
                yield ty, m, n, k, ta, tb


def function(i, ty, m, n, k, ta, tb):
    a = f"{k}x{m}" if ta else f"{m}x{k}"
    b = f"{n}x{k}" if tb else f"{k}x{n}"
    ma, mb = MAPS[(ta, tb)]
    return (f"func.func @p{i}(%a: memref<{a}x{ty}>, %b: memref<{b}x{ty}>, "
            f"%c: memref<{m}x{n}x{ty}>) {{\n"
            f"  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> {ma}>, "
            f"affine_map<(m, n, k) -> {mb}>, affine_map<(m, n, k) -> (m, n)>]\n"
            f"    ins(%a, %b : memref<{a}x{ty}>, memref<{b}x{ty}>) "
            f"outs(%c : memref<{m}x{n}x{ty}>)\n  return\n}}\n")


grid = list(products())
module = "".join(function(i, *p) for i, p in enumerate(grid))
out = subprocess.run(["ga-opt", "--convert-linalg-to-blas", "-"], input=module,
                     capture_output=True, text=True, check=True).stdout
called = set()
for match in re.finditer(r"func\.func @p(\d+)\(.*?\breturn\b", out, re.S):
    if "call @cblas_" in match.group(0):
        called.add(int(match.group(1)))


def allocations(ty, m, n, k, ta, tb):
    scalar = ctypes.c_float if ty == "f32" else ctypes.c_double
    gemm = blas.cblas_sgemm if ty == "f32" else blas.cblas_dgemm
    a, b, c = (scalar * (m * k))(), (scalar * (k * n))(), (scalar * (m * n))()
    lda, ldb = (m if ta else k), (k if tb else n)
    args = (ROW_MAJOR, TRANS if ta else NO_TRANS, TRANS if tb else NO_TRANS,
            m, n, k, 1.0, a, lda, b, ldb, 1.0, c, n)
    gemm(*args)  # the library's first-use set-up
    before = counter.lib.ga_heap_allocations()
    gemm(*args)
    return counter.lib.ga_heap_allocations() - before


allocating_calls = kept = kept_allocating = 0
for i, product in enumerate(grid):
    count = allocations(*product)
    if i in called:
        if count:
            allocating_calls += 1
            print("a call allocates:", product, count)
    else:
        kept += 1
        kept_allocating += count > 0
# Every product of the grid that the rule does not cover became a call.
print(f"{len(called)} calls, {kept} kept in loops")
# CHECK: calls allocating 0{{$}}
print("calls allocating", allocating_calls)
# With AVX-512 kernels the kept products are exactly those that allocate.
# CHECK: kept that do not allocate 0{{$}}
print("kept that do not allocate",
      kept - kept_allocating if avx512_core else 0)
assert kept > 0 and len(called) > kept
