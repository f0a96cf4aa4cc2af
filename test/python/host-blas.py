# RUN: env PYTHONPATH=%ga_python_path %python %s | FileCheck %s
"""The host BLAS a compiled CPU step calls allocates nothing per product
(ga_mlir._blas), on whatever CPU runs the test: a product of OpenBLAS's
small-matrix range (at most 100^3 multiply-adds) and a larger one, counted
by libGAHeapCount.so. On an AVX-512 CPU OpenBLAS's own kernel choice
mallocs a packing buffer per small product, which a step's memory report
cannot hold (a step compiled to max_memory measured over its budget)."""

import ctypes

from ga_mlir import _blas, steplib

steplib.preload_heap_counter()
counter = steplib.HeapCounter()
blas = _blas.load_host_blas()
# CHECK: counter True, blas True
print(f"counter {counter.active}, blas {bool(blas)}")
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
blas.cblas_sgemm.restype = None
blas.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [
    ctypes.c_float, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
    ctypes.c_int, ctypes.c_float, ctypes.c_void_p, ctypes.c_int]


def allocations(m, n, k, trans_a, trans_b, beta):
    a = (ctypes.c_float * (m * k))(*[0.5] * (m * k))
    b = (ctypes.c_float * (k * n))(*[0.25] * (k * n))
    c = (ctypes.c_float * (m * n))()
    lda, ldb = (m if trans_a == TRANS else k), (k if trans_b == TRANS else n)
    blas.cblas_sgemm(ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, a, lda, b,
                     ldb, beta, c, n)  # the library's first-use set-up
    before = counter.lib.ga_heap_allocations()
    blas.cblas_sgemm(ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, a, lda, b,
                     ldb, beta, c, n)
    after = counter.lib.ga_heap_allocations()
    assert c[0] == (1.0 + beta) * 0.125 * k, c[0]
    return after - before


# The products of a small CNN's step (micro-batches of 2 to 4 samples) and
# a larger one.
shapes = ((4, 128, 9, NO_TRANS, NO_TRANS, 1.0),
          (4, 32, 54, NO_TRANS, NO_TRANS, 1.0),
          (4, 9, 128, NO_TRANS, NO_TRANS, 1.0),
          (6, 36, 8, NO_TRANS, NO_TRANS, 1.0),
          (6, 8, 36, NO_TRANS, NO_TRANS, 1.0),
          (2, 6, 6, NO_TRANS, NO_TRANS, 0.0),
          (2, 6, 6, NO_TRANS, TRANS, 1.0),
          (6, 6, 2, TRANS, NO_TRANS, 1.0),
          (16, 16, 18, NO_TRANS, NO_TRANS, 1.0),
          (256, 128, 192, NO_TRANS, NO_TRANS, 1.0))
# CHECK-COUNT-10: allocations 0{{$}}
for shape in shapes:
    print(shape[:3], "allocations", allocations(*shape))
