"""Build a training step ahead of time and call it through ctypes.

The ahead-of-time build through ga-compile (ga_mlir.aot), and a caller of the
packed entry point ``_ga_packed_<name>`` (ga_mlir._entry) that passes numpy
arrays as memref descriptors. With ``libGAHeapCount.so`` preloaded (``LD_PRELOAD``), the heap
counters measure the live bytes of a call (see ``HeapCounter``).

Needs numpy; no other package.
"""

import ctypes
import os
import sys
import time

import numpy as np

from . import library_dir
from ._entry import PackedCall, packed_entry_point

_FLOATS = ("f16", "bf16", "f32", "f64")
_DTYPES = {"f32": np.float32, "f64": np.float64, "bf16": np.uint16, "f16": np.float16,
           "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8, "i1": np.bool_,
           "index": np.int64}
_CTYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i64": ctypes.c_int64,
           "i32": ctypes.c_int32, "i16": ctypes.c_int16, "i8": ctypes.c_int8, "i1": ctypes.c_bool,
           "index": ctypes.c_int64}


class ArgType:
    """One argument or result type: a tensor (shape, element) or a scalar,
    from its type as read from the parsed IR (ga_mlir.ValueType) and its
    printed form `text` (for messages)."""

    def __init__(self, value_type, text):
        self.text = text
        shape, element = value_type
        if shape is not None and None not in shape and element in _DTYPES:
            self.shape, self.element = tuple(shape), element
        elif shape is None and element in _CTYPES:
            self.shape, self.element = None, element
        else:
            raise ValueError(f"unsupported argument type '{text}' (static tensors and scalars only)")

    @property
    def is_tensor(self):
        return self.shape is not None

    @property
    def dtype(self):
        return _DTYPES[self.element]

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


def function_type(path, func="train_step"):
    """(argument types, result types) of `func` in the MLIR file `path`,
    read from the parsed IR through the C API (ga_mlir.function_info)."""
    from . import PipelineError, function_info
    with open(path) as f:
        text = f.read()
    try:
        info = function_info(text, func, filename=path)
    except PipelineError:
        raise ValueError(f"no function @{func} in {path}") from None
    return ([ArgType(*t) for t in zip(info.argument_types, info.arguments)],
            [ArgType(*t) for t in zip(info.result_types, info.results)])


def draw_inputs(path, func="train_step", seed=0):
    """The arguments of `func` in the MLIR file `path` as numpy arrays (0-d
    for scalars), drawn as `ga-verify --seed=<seed>` draws them: per the
    arguments' ga.init / ga.range (ga_mlir.draw_inputs, through the C API)."""
    from . import draw_inputs as draw
    with open(path) as f:
        text = f.read()
    arg_types, _ = function_type(path, func)
    return [np.frombuffer(drawn.data, dtype=t.dtype).reshape(drawn.shape).copy()
            for drawn, t in zip(draw(text, func, seed, filename=path), arg_types)]


def build_library(ga_opt, path, out_dir, name, accumulate=None, cpu_options="", mcpu=None):
    """Builds <name>.so in `out_dir` from the step in `path` with ga-compile
    (ga_mlir.aot): the --ga-accumulate rewrite with the option string
    `accumulate` (None: the step as it is), then --ga-lower-to-cpu with
    c-interface=1 and `cpu_options`. Returns its path. `ga_opt` names the
    build or install tree (its bin/ga-opt)."""
    from . import aot
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, name + ".so")
    with open(path) as f:
        source = f.read()
    try:
        aot.compile_step(source, out, "cpu", accumulate=accumulate, lower_options=cpu_options,
                         mcpu=mcpu, build_dir=os.path.dirname(os.path.dirname(os.path.abspath(ga_opt))),
                         name=path)
    except aot.CompileError as e:
        raise RuntimeError(f"ga-compile {path}: {e}") from None
    return out


def _widen(a, element):
    """`a` as float64, bf16's raw 16 bits read as the value they encode."""
    a = np.asarray(a)
    if element == "bf16":
        a = (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def derived_tolerances(ga_opt, path, out_dir, args, ref, func="train_step"):
    """ga-verify's derived tolerance of every element of the results `ref` of
    `func` (the step in the MLIR file `path`) on the arguments `args`: per
    float result, min(B * bound, S * spread) element by element, with the
    rule (runs, B, S) of ga_mlir.tolerance_rule(), the bound from
    --ga-forward-error-bound and the spread the largest distance from `ref`
    over the runs of --ga-perturb-roundings; per integer result, a bool
    array of the elements that may differ (they derive from a comparison of
    floats closer than their bounds). A step the bound cannot follow gets the
    spread alone, as in ga-verify. Builds the analysis library in `out_dir`
    (see build_library for `ga_opt`)."""
    from . import PipelineError, run_pipeline, tolerance_rule
    runs, per_bound, per_spread = tolerance_rule()
    with open(path) as f:
        text = f.read()
    perturb = f"ga-perturb-roundings{{func={func}}}"
    bound = f"ga-forward-error-bound{{func={func}}}"
    try:
        analysis = run_pipeline(text, f"builtin.module(inline,{bound},{perturb})", filename=path)
    except PipelineError:
        analysis, bound = run_pipeline(text, f"builtin.module(inline,{perturb})", filename=path), None
    analysis_path = os.path.join(out_dir, "analysis.mlir")
    os.makedirs(out_dir, exist_ok=True)
    with open(analysis_path, "w") as f:
        f.write(analysis)
    lib = build_library(ga_opt, analysis_path, out_dir, "analysis")
    _, result_types = function_type(path, func)
    n = len(ref)
    bounds = [None] * n
    if bound:
        name = func + "_error_bound"
        bounds = CompiledStep(lib, *function_type(analysis_path, name), func=name)(*args)[n:]
    name = func + "_perturbed"
    moved = CompiledStep(lib, *function_type(analysis_path, name), func=name)
    reference = [_widen(r, t.element) for r, t in zip(ref, result_types)]
    spread = [np.zeros(np.shape(r)) for r in ref]
    for seed in range(1, runs + 1):
        for i, (p, t) in enumerate(zip(moved(*args, seed), result_types)):
            if t.element in _FLOATS:
                p = _widen(p, t.element)
                with np.errstate(invalid="ignore"):
                    d = np.where(p == reference[i], 0.0, np.abs(p - reference[i]))
                spread[i] = np.where(np.isnan(d) | np.isnan(spread[i]), np.nan,
                                     np.maximum(spread[i], d))
    tolerances = []
    for e, s, t in zip(bounds, spread, result_types):
        if t.element not in _FLOATS:
            tolerances.append(np.zeros(np.shape(s), bool) if e is None else np.asarray(e, bool))
            continue
        by_bound = np.inf if e is None else np.where(np.isnan(e), np.inf, per_bound * np.asarray(e, np.float64))
        by_spread = np.where(np.isnan(s), np.inf, per_spread * s)
        tolerances.append(np.minimum(by_bound, by_spread))
    return tolerances


def memref_descriptor_type(rank):
    """The ctypes structure of a ranked memref descriptor of `rank`
    dimensions: allocated and aligned pointers, offset, sizes, strides (no
    sizes and strides for rank 0), as `_mlir_ciface_` functions take it."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def memref_descriptor(arr):
    """A memref descriptor of the numpy array `arr` (strides in elements),
    pointing at its data: keep `arr` alive while the descriptor is used."""
    d = memref_descriptor_type(arr.ndim)()
    d.allocated = d.aligned = arr.ctypes.data
    d.offset = 0
    for i in range(arr.ndim):
        d.sizes[i] = arr.shape[i]
        d.strides[i] = arr.strides[i] // arr.itemsize
    return d


def time_calls(fn, warmup, reps):
    """Calls `fn()` `warmup` times, then `reps` times more; returns the wall
    time of each of the latter calls in seconds (time.perf_counter)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _to_array(desc, t):
    """A copy of the buffer a result descriptor points to."""
    n = int(np.prod(t.shape, dtype=np.int64))
    buf = (ctypes.c_char * (n * np.dtype(t.dtype).itemsize)).from_address(desc.aligned)
    return np.frombuffer(buf, dtype=t.dtype).reshape(t.shape).copy()


class CompiledStep:
    """The function `func` of a library built by build_library. Calls take
    numpy arrays (tensors) and Python numbers (scalars) in argument order and
    return the results as numpy arrays and numbers; the result buffers the
    step allocated are freed after they are copied (`free_results`)."""

    def __init__(self, library, arg_types, result_types, func="train_step", free_results=True):
        self.lib = ctypes.CDLL(library)
        self.fn = packed_entry_point(self.lib, library, func)
        self.arg_types, self.result_types = arg_types, result_types
        self.free_results = free_results
        self._libc = ctypes.CDLL(None)
        fields = []
        for i, t in enumerate(result_types):
            fields.append((f"r{i}", memref_descriptor_type(len(t.shape)) if t.is_tensor else _CTYPES[t.element]))
        self._results_type = type("Results", (ctypes.Structure,), {"_fields_": fields})
        self._scalar_result = len(result_types) == 1 and not result_types[0].is_tensor

    def prepare(self, args):
        """The packed call (ga_mlir._entry.PackedCall) for `args`, the
        objects it points to (kept alive by the caller) and the results
        structure (or the scalar result) it writes."""
        if len(args) != len(self.arg_types):
            raise ValueError(f"expected {len(self.arg_types)} arguments, got {len(args)}")
        keep, call = [], []
        for a, t in zip(args, self.arg_types):
            if t.is_tensor:
                a = np.require(a, dtype=t.dtype, requirements="C")
                if a.shape != t.shape:
                    raise ValueError(f"argument of shape {a.shape} for {t.text}")
                d = memref_descriptor(a)
                keep += [a, d]
                call.append(d)
            else:
                call.append(_CTYPES[t.element](a))
        results = None
        if self._scalar_result:
            results = _CTYPES[self.result_types[0].element]()
            return keep, PackedCall(call, result=results), results
        if self.result_types:
            results = self._results_type()
            call.insert(0, results)
        return keep, PackedCall(call), results

    def call_prepared(self, call):
        call(self.fn)

    def collect(self, results):
        """The results of a call as numpy arrays and numbers."""
        if self._scalar_result:
            return [results.value]
        out = []
        freed = set()
        for i, t in enumerate(self.result_types):
            r = getattr(results, f"r{i}")
            if t.is_tensor:
                out.append(_to_array(r, t))
                if self.free_results and r.allocated not in freed:
                    freed.add(r.allocated)
                    self._libc.free(ctypes.c_void_p(r.allocated))
            else:
                out.append(r)
        return out

    def __call__(self, *args):
        keep, call, results = self.prepare(args)
        self.call_prepared(call)
        del keep
        return self.collect(results)


def heap_count_library():
    """Path of libGAHeapCount.so next to libGACAPI.so in the build or install
    tree, or None."""
    path = os.path.join(library_dir(), "libGAHeapCount.so")
    return path if os.path.exists(path) else None


def preload_heap_counter():
    """Re-executes this program with libGAHeapCount.so preloaded (once: the
    re-executed program finds GA_HEAP_COUNT_PRELOADED set) and BLAS and
    OpenMP on one thread, so that HeapCounter counts every allocation of
    the process; does nothing where the library is not built."""
    path = heap_count_library()
    if path and "GA_HEAP_COUNT_PRELOADED" not in os.environ:
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  dict(os.environ, LD_PRELOAD=path,
                       GA_HEAP_COUNT_PRELOADED="1",
                       OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"))


class HeapCounter:
    """The counters of libGAHeapCount.so when it is preloaded; `active` is
    False otherwise (then every figure is None)."""

    def __init__(self):
        path = heap_count_library()
        preload = os.environ.get("LD_PRELOAD", "")
        self.active = bool(path) and os.path.basename(path) in preload
        if self.active:
            self.lib = ctypes.CDLL(path)
            for f in ("ga_heap_live", "ga_heap_peak", "ga_heap_allocations"):
                getattr(self.lib, f).restype = ctypes.c_longlong

    def _checked(self, value):
        """`value`, unless the counter's table overflowed: it then misses
        allocations and its figures are wrong, which must not pass for a
        measurement."""
        if self.lib.ga_heap_overflowed():
            raise RuntimeError(
                "libGAHeapCount.so: its table of live allocations "
                "overflowed, the heap counts are incomplete")
        return value

    def live(self):
        return self._checked(self.lib.ga_heap_live()) if self.active \
            else None

    def peak(self):
        return self._checked(self.lib.ga_heap_peak()) if self.active \
            else None

    def reset_peak(self):
        if self.active:
            self.lib.ga_heap_reset_peak()

    def step_peak(self, step, call, held=0):
        """(what call() returns, the peak of that call of the compiled step
        `step`: `held`, what the caller holds between calls (parameters,
        optimizer state, the batch), plus the heap's growth during the call,
        plus the static storage of the step's libraries)."""
        self.reset_peak()
        live = self.live()
        out = call()
        heap = self.peak() - live
        return out, held + heap + step_static_bytes(step)

    def measure_call(self, step, args):
        """Calls `step` on `args` and returns (results, the heap peak of the
        call: argument bytes plus the peak growth of the live heap during the
        call, or None without the counter)."""
        keep, call, results = step.prepare(args)
        arg_bytes = sum(t.nbytes for t in step.arg_types if t.is_tensor)
        self.reset_peak()
        before = self.live()
        step.call_prepared(call)
        peak = self.peak()
        out = step.collect(results)
        del keep
        if not self.active:
            return out, None
        return out, arg_bytes + (peak - before)


def step_static_bytes(step):
    """The static storage of a compiled PyTorch step's libraries (one per
    input shape compiled)."""
    return sum(static_storage_bytes(v.path) for v in step._variants.values())


def static_storage_bytes(path):
    """Bytes of the zero-initialized storage that the step's own code
    reserves in the shared library `path` (`static-temporaries=1` puts its
    temporaries there), read from its ELF sections: the writable NOBITS
    sections (`.bss`) past the named objects (the C runtime's, at the
    start), from the section's alignment on; the step's buffers are private and unnamed. They are
    held for as long as the library is loaded, so a measured peak adds them
    to the heap's."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    order = "<" if data[5] == 1 else ">"
    shoff, = struct.unpack_from(order + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
    sections = [struct.unpack_from(order + "IIQQQQIIQQ", data,
                                   shoff + i * shentsize)
                for i in range(shnum)]
    # (start, end) of each writable, allocated, non-TLS NOBITS section.
    storage = [(h[3], h[3] + h[5], max(h[8], 1)) for h in sections
               if h[1] == 8 and h[2] & 3 == 3 and not h[2] & 0x400]
    named_end = {start: start for start, _, _ in storage}
    for h in sections:
        if h[1] != 2:  # SHT_SYMTAB
            continue
        for k in range(h[5] // h[9]):
            _, _, _, _, value, size = struct.unpack_from(
                order + "IBBHQQ", data, h[4] + k * h[9])
            for start, end, _ in storage:
                if start <= value < end:
                    named_end[start] = max(named_end[start], value + size)
    # The step's buffers start at the section's alignment after them.
    return sum(max(end - -(-named_end[start] // align) * align, 0)
               for start, end, align in storage)
