"""The calling convention of compiled steps: one packed entry point.

A library lowered with ``c-interface=1`` (--ga-lower-to-cpu,
--ga-lower-to-nvvm, ga-compile) exports, for its step ``<name>``, the C
wrapper ``_mlir_ciface_<name>`` (memref descriptors by pointer, the results
structure first when the step returns tensors) and the packed entry point
``_ga_packed_<name>(void **args)`` that --ga-emit-packed-interfaces builds
over it: ``args[i]`` is the address of the wrapper's i-th parameter (for a
descriptor or the results structure, which the wrapper takes by pointer, the
address of that pointer), and a value the wrapper returns is stored at the
address ``args[n]``. This is the convention of MLIR's ExecutionEngine packed
wrappers (its Python ``invoke`` passes ``pointer(pointer(descriptor))``).

Every caller of a compiled step in this package (ga_mlir.steplib and the
PyTorch frontend's CPU, CUDA, saved and data-parallel steps) calls it here:
one ctypes argument whatever the number of tensors (ctypes passes at most
1024 arguments to a foreign function).

Needs the standard library only.
"""

import ctypes

PACKED_PREFIX = "_ga_packed_"
_POINTER_SIZE = ctypes.sizeof(ctypes.c_void_p)


class MissingEntryPoint(RuntimeError):
    """The library does not export the packed entry point."""


def packed_entry_point(handle, path, func="train_step"):
    """The packed entry point of `func` in the loaded library `handle` (a
    ctypes.CDLL of `path`), or MissingEntryPoint naming the library."""
    symbol = PACKED_PREFIX + func
    try:
        fn = getattr(handle, symbol)
    except AttributeError:
        raise MissingEntryPoint(
            f"{path} exports no {symbol}: it was not lowered with "
            "c-interface=1 by this version of ga-mlir (libraries built "
            "before the packed entry point must be compiled again)") \
            from None
    fn.argtypes = [ctypes.c_void_p]
    fn.restype = None
    return fn


class PackedCall:
    """The argument array of one call: `parameters` are ctypes objects in
    the order of the C wrapper's parameters, a structure (memref descriptor,
    results structure) standing for the pointer to it that the wrapper
    takes, any other object (c_float, c_int64, ...) for its value; `result`
    (a ctypes object) receives the value the wrapper returns, if it returns
    one. Keep the objects alive while the call is made; calling the same
    PackedCall again passes their current contents."""

    def __init__(self, parameters, result=None):
        n = len(parameters)
        self._pointers = (ctypes.c_void_p * n)()
        self.slots = (ctypes.c_void_p * (n + (result is not None)))()
        base = ctypes.addressof(self._pointers)
        for i, p in enumerate(parameters):
            if isinstance(p, ctypes.Structure):
                self._pointers[i] = ctypes.addressof(p)
                self.slots[i] = base + i * _POINTER_SIZE
            else:
                self.slots[i] = ctypes.addressof(p)
        if result is not None:
            self.slots[n] = ctypes.addressof(result)
        self._keep = (parameters, result)

    def __call__(self, fn):
        fn(ctypes.addressof(self.slots))
