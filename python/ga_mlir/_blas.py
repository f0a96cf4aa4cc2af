"""The host BLAS that compiled CPU steps call (OpenBLAS, libopenblas.so.0),
loaded once, before any step library: the step libraries loaded later (their
DT_NEEDED libopenblas.so.0) bind to this copy.

OpenBLAS picks its kernels when it is loaded, by CPU model, and falls back
to its oldest x86-64 kernels (Prescott: SSE3) on a model its release
predates: Debian's 0.3.21 does so on an Emerald Rapids Xeon (family 6,
model 207), where its AVX-512 (SkylakeX) kernels run our products about
four times as fast. The library is therefore loaded with
OPENBLAS_CORETYPE set from the CPU's features (best_core): SkylakeX with
AVX-512, Haswell with AVX2 and FMA, Sandybridge with AVX. A user's own
OPENBLAS_CORETYPE is kept.

One of the AVX-512 kernels allocates in the call: the "small-matrix"
kernel for untransposed operands mallocs a packing buffer for some
products of at most 100^3 multiply-adds, heap that a step's memory report
cannot hold. `--convert-linalg-to-blas` leaves exactly those products to
the step's loops (`avoid-allocating-kernels`, see its description), so no
call that a step makes allocates, whichever kernels run
(test/python/host-blas.py). numpy's and torch's BLAS are other libraries
and are not affected."""

import ctypes
import os
import platform

_SONAME = "libopenblas.so.0"
_loaded = None


def _cpu_flags():
    """The flags of the first CPU in /proc/cpuinfo, or an empty set."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def best_core(flags=None):
    """The OPENBLAS_CORETYPE of the widest vector kernels this x86-64 CPU
    runs (Linux lists an AVX-512 flag only where the kernel saves the
    registers), or None off x86-64 or without AVX."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    flags = _cpu_flags() if flags is None else flags
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx2", "fma"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    if "avx" in flags:
        return "Sandybridge"
    return None


def load_host_blas():
    """Loads libopenblas.so.0 once (see the module's docstring); nothing
    where it is not installed."""
    global _loaded
    if _loaded is not None:
        return _loaded
    core = best_core()
    keep = "OPENBLAS_CORETYPE" in os.environ
    if core and not keep:
        os.environ["OPENBLAS_CORETYPE"] = core
    try:
        _loaded = ctypes.CDLL(_SONAME)
    except OSError:
        _loaded = False
    finally:
        if core and not keep:
            del os.environ["OPENBLAS_CORETYPE"]
    return _loaded
