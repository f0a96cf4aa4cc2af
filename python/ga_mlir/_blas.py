"""The host BLAS that compiled CPU steps call (OpenBLAS, libopenblas.so.0),
loaded once so that a step allocates nothing the static peak cannot see.

OpenBLAS chooses its kernels by CPU when it is loaded. On CPUs with AVX-512
(its SkylakeX, Cooperlake and SapphireRapids cores) it runs products of at
most 100^3 multiply-adds through "small-matrix" kernels that malloc a
packing buffer on every call (1,152 bytes for a 16 x 18 panel, measured on
an AMD EPYC with AVX-512): heap the step's memory report does not hold, so a
step compiled to `max_memory` measured a few hundred bytes over its budget
on such a machine. Its AVX2 kernels (the Haswell core) allocate nothing per
call. Before anything else loads it, the library is therefore loaded here
with OPENBLAS_CORETYPE=Haswell on an x86-64 CPU that has AVX2, FMA and
AVX-512; the step libraries loaded later (their DT_NEEDED libopenblas.so.0)
bind to this copy. A user's own OPENBLAS_CORETYPE is kept, and then a
measured peak may exceed the report by those buffers. numpy's and torch's
BLAS are other libraries and are not affected."""

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


def allocation_free_core():
    """The OPENBLAS_CORETYPE whose kernels allocate nothing per call on
    this CPU, or None where OpenBLAS's own choice already does (no
    AVX-512) or cannot be replaced."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    flags = _cpu_flags()
    if "avx512f" in flags and {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def load_host_blas():
    """Loads libopenblas.so.0 once (see the module's docstring); nothing
    where it is not installed."""
    global _loaded
    if _loaded is not None:
        return _loaded
    core = allocation_free_core()
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
