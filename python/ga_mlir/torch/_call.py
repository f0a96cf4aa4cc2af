"""Calling a compiled step's library on tensors (CPU or CUDA), through ctypes.

Shared by the step compiled in this process (_step) and a saved step loaded
where only torch is installed (_saved): nothing here needs torch-mlir or the
ga-mlir library.

Every library is called through its packed entry point
(`_ga_packed_train_step(void **args)`, see ga_mlir._entry): one ctypes
argument, whatever the number of tensors. CPU libraries (--ga-lower-to-cpu,
out-params=1) write the results that are
not updated in place into buffers of ours, passed as out-parameters. CUDA
libraries (--ga-lower-to-nvvm) write the same updates in place (the same
--ga-write-results-in-place form) and return the other results in device
memory that they allocated; those are copied into their tensors on
PyTorch's current stream, then freed on that stream. A library whose
updates could not all be written in place returns every result this way.
"""

import ctypes
import os

import torch

from .._entry import MissingEntryPoint, PackedCall, packed_entry_point
from ._common import CompileError
from ._layout import flat_arguments as _flat_arguments

_DESCRIPTORS = {}


def descriptor_type(rank):
    """The ctypes structure of a memref descriptor of `rank` dimensions."""
    if rank not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p),
                  ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,),
                                  {"_fields_": fields})
    return _DESCRIPTORS[rank]


def descriptor(t):
    """The memref descriptor of tensor `t` (its own storage)."""
    d = descriptor_type(t.dim())()
    d.allocated = d.aligned = t.data_ptr()
    d.offset = 0
    for i, (size, stride) in enumerate(zip(t.shape, t.stride())):
        d.sizes[i] = size
        d.strides[i] = stride
    return d


def entry_point(handle, path):
    """The packed entry point of the step in the loaded library `handle`
    (of `path`), or CompileError."""
    try:
        return packed_entry_point(handle, path)
    except MissingEntryPoint as e:
        raise CompileError(str(e), code="saved-step-format") from None


def check_no_shared_storage(flat, written):
    """The step writes the arguments `written` in place, and bufferization
    assumed that no two arguments share memory: refuse tensors that do (two
    parameters that are views of one tensor, an input that is a view of a
    parameter, say). One sweep in order of start address: each span is
    checked against the furthest-reaching span before it and the
    furthest-reaching written one, which finds every overlapping pair with
    a written member (not only neighbours)."""
    def span(t):
        start = t.data_ptr()
        return start, start + t.numel() * t.element_size()
    spans = sorted((span(t), i) for i, t in enumerate(flat) if t.numel())
    targets = set(written)
    reach = reach_written = (0, None)  # (end, argument)
    for (start, end), i in spans:
        other = reach[1] if i in targets and start < reach[0] else \
            reach_written[1] if start < reach_written[0] else None
        if other is not None:
            raise CompileError(
                f"arguments {min(i, other)} and {max(i, other)} of the step "
                "share memory, and one of them is updated in place: give "
                "every parameter and optimizer state its own storage, or "
                "pass in_place=False",
                code="storage-layout")
        reach = max(reach, (end, i), key=lambda r: r[0])
        if i in targets:
            reach_written = max(reach_written, (end, i), key=lambda r: r[0])


def require_cuda(what="target='cuda'"):
    """CompileError unless PyTorch sees a CUDA device: loading a CUDA
    step's library without one would stop the process (its kernels load
    when the library does)."""
    if not torch.cuda.is_available():
        raise CompileError(
            f"{what}: no CUDA device (torch.cuda.is_available() is False): "
            "the step was compiled for the GPU and can only run on a "
            "machine with an NVIDIA GPU and driver; compile with "
            "target='cpu' to run here",
            code="no-cuda-device")


def _one_blas_thread_under_openmp(handle):
    """An openmp=True step runs its large products on its own OpenMP
    threads, each call on a block of the product (--convert-linalg-to-blas
    parallel-blocks): OpenBLAS must then run each call on one thread, or
    its own pthreads and the step's take the cores from each other
    (docs/CPU.md, "One pool"). The library says both: it references
    libomp's __kmpc_fork_call only with OpenMP regions, and OpenBLAS's
    openblas_set_num_threads is found through it only when it links
    OpenBLAS. Process-wide for that OpenBLAS (Debian's, which only
    ga-mlir's steps use here: PyTorch and numpy bundle their own BLAS)."""
    if not hasattr(handle, "__kmpc_fork_call"):
        return
    set_threads = getattr(handle, "openblas_set_num_threads", None)
    if set_threads is not None:
        set_threads.argtypes, set_threads.restype = [ctypes.c_int], None
        set_threads(1)


class CpuLibrary:
    """A CPU library: `results` are the (shape, dtype) of the results that
    come back through out-parameters (the others are written in place)."""

    target = "cpu"

    def __init__(self, lib, results):
        # An openmp=True step's idle OpenMP workers spin for 1 ms, not
        # libomp's default 200 ms: long enough to wait for the step's next
        # parallel region awake (sleeping at once, 0, made each region wake
        # them: ResNet-18 on 2 threads 148 against 97-108 ms), short enough
        # not to take the cores from PyTorch's code between steps or from
        # OpenBLAS's threads (docs/CPU.md, "Two threads"). Read when libomp
        # starts; a value the user set is kept.
        os.environ.setdefault("KMP_BLOCKTIME", "1")
        self.handle = ctypes.CDLL(lib)
        _one_blas_thread_under_openmp(self.handle)
        self.function = entry_point(self.handle, lib)
        self.outputs = [torch.empty(shape, dtype=dtype)
                        for shape, dtype in results]
        self.output_descriptors = [descriptor(t) for t in self.outputs]

    def device_ok(self, t):
        return t.device.type == "cpu"

    def run(self, flat, arguments=None):
        """Calls the step on `flat`; `arguments(flat, descriptors)`, when
        given, returns the parameters before the out-parameters as ctypes
        objects (descriptors, scalars: see PackedCall; the data-parallel
        step adds its shard's bounds)."""
        descriptors = [descriptor(t) for t in flat]
        parameters = arguments(flat, descriptors) if arguments else \
            descriptors
        PackedCall(list(parameters) + self.output_descriptors)(self.function)
        return iter(self.outputs)


class _DeviceArray:
    """A device buffer as __cuda_array_interface__ (for torch.as_tensor)."""

    _TYPESTR = {torch.float32: "<f4", torch.float64: "<f8",
                torch.float16: "<f2", torch.int64: "<i8", torch.int32: "<i4",
                torch.bool: "|b1"}

    def __init__(self, pointer, shape, dtype):
        if dtype not in self._TYPESTR:
            raise CompileError(f"a CUDA step's result of dtype {dtype} "
                               "cannot be read back",
                               code="tensor-placement")
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": self._TYPESTR[dtype],
            "data": (pointer, False), "version": 3, "strides": None}


class CudaLibrary:
    """A CUDA library (every result in device memory it allocated)."""

    target = "cuda"

    def __init__(self, lib, results):
        require_cuda()
        torch.cuda.init()  # the primary context, shared with our runtime
        runtime = os.path.join(os.path.dirname(lib), "libga_cuda_runtime.so")
        self.runtime = ctypes.CDLL(runtime)
        # The runtime retains one device's primary context, chosen before
        # its first call (the library's kernels load with it): PyTorch's
        # current device, the one torchrun's rank uses (set_device), not
        # device 0 of every process.
        self.runtime.mgpuSetDefaultDevice.argtypes = [ctypes.c_int32]
        self.runtime.mgpuSetDefaultDevice(torch.cuda.current_device())
        self.runtime.gaCudaSetCallerStream.argtypes = [ctypes.c_void_p]
        self.runtime.mgpuMemFree.argtypes = [ctypes.c_void_p,
                                             ctypes.c_void_p]
        self.handle = ctypes.CDLL(lib)
        self.function = entry_point(self.handle, lib)
        self.results = results
        self.results_type = type("Results", (ctypes.Structure,), {
            "_fields_": [(f"r{i}", descriptor_type(len(s)))
                         for i, (s, _) in enumerate(results)]})

    def device_ok(self, t):
        return t.device.type == "cuda"

    def run(self, flat, arguments=None):
        """As CpuLibrary.run (`arguments`: the data-parallel step's), the
        results in device memory."""
        descriptors = [descriptor(t) for t in flat]
        parameters = arguments(flat, descriptors) if arguments else \
            descriptors
        results = self.results_type()
        stream = torch.cuda.current_stream()
        self.runtime.gaCudaSetCallerStream(stream.cuda_stream)
        try:
            PackedCall([results, *parameters])(self.function)
        finally:
            self.runtime.gaCudaSetCallerStream(None)
        # Results that are an argument's own buffer (written in place by
        # bufferization) are neither copied nor freed.
        owned = {t.data_ptr() for t in flat}
        views, free = [], set()
        for i, (shape, dtype) in enumerate(self.results):
            r = getattr(results, f"r{i}")
            pointer = r.aligned + r.offset * torch.empty(
                (), dtype=dtype).element_size()
            views.append(None if pointer in owned else torch.as_tensor(
                _DeviceArray(pointer, shape, dtype), device=stream.device))
            if r.allocated not in owned:
                free.add(r.allocated)
        return _DeviceResults(self, views, free, stream)


class _DeviceResults:
    """The results of one CUDA call: iterated like the CPU outputs; `close`
    frees the step's buffers once the copies out of them are done."""

    def __init__(self, lib, views, free, stream):
        self.lib, self.views, self.free, self.stream = lib, views, free, \
            stream
        self.index = 0

    def __iter__(self):
        return self

    def __next__(self):
        v = self.views[self.index]
        self.index += 1
        return v

    def close(self):
        # Stream-ordered: freed after the copies out of them, which are on
        # the same stream, without a host synchronization (the runtime's
        # memory pools; without pools the free synchronizes the device).
        for pointer in self.free:
            self.lib.runtime.mgpuMemFree(pointer, self.stream.cuda_stream)


def check_argument_types(flat, expected):
    """CompileError unless the first tensors of `flat` have the shapes and
    dtypes `expected` ((what, shape, dtype) each: what the library was
    compiled for). A tensor keeps its identity when its storage is replaced
    (`p.data = ...`, `model.to(torch.float64)`), so the step's own lookup
    by identity does not see that."""
    for t, (what, shape, dtype) in zip(flat, expected):
        if tuple(t.shape) != shape or t.dtype != dtype:
            raise CompileError(
                f"{what} is now {list(t.shape)} {t.dtype}; the step was "
                f"compiled for {list(shape)} {dtype} (its storage was "
                "replaced: p.data = ..., model.to(...), or a state of "
                "another shape): compile the step again for it",
                code="step-signature-mismatch")


def call_step(library, spec, model, inputs, hyper, in_place,
              arguments=None, expected=None):
    """One call of `library` (a CpuLibrary or CudaLibrary) laid out as
    `spec` (a _Spec), updating the parameters, states and buffers; returns
    the loss (with the metrics: _metrics.Metrics.pack). `hyper`: the 0-d
    hyper-parameter tensors, reused between
    calls; `in_place`: the (result, argument) pairs the library writes in
    place; `arguments`: see CpuLibrary.run; `expected`: see
    check_argument_types."""
    flat = _flat_arguments(spec, model, inputs, hyper=hyper)
    if expected:
        check_argument_types(flat, expected)
    for t in flat:
        if not t.is_contiguous():
            raise CompileError("parameters, buffers and optimizer states "
                               "must be contiguous",
                               code="storage-layout")
        if not library.device_ok(t):
            raise CompileError(
                f"the step was compiled for target='{library.target}': its "
                f"parameters, optimizer states, buffers and inputs must be "
                f"{'CUDA' if library.target == 'cuda' else 'CPU'} tensors "
                f"(found one on {t.device})",
                code="tensor-placement")
    if in_place:
        check_no_shared_storage(flat, [j for _, j in in_place])
    out = library.run(flat, arguments)
    copied = not in_place
    targets, values = [], []

    def assign(target, value):
        if value is not None:  # None: the library wrote it in place
            targets.append(target)
            values.append(value)
    try:
        if copied:
            for p in spec.params:
                assign(p, next(out))
        k = len(spec.params) + len(spec.frozen) + len(spec.buffer_names)
        states = []
        for i, p in enumerate(spec.params):
            states.append(flat[k:k + spec.num_states[i]])
            k += spec.num_states[i]
            if copied:
                for s in states[-1]:
                    assign(s, next(out))
        spec.opt.commit_states(spec.params, states)
        if copied:
            buffers = dict(model.named_buffers())
            for n in spec.mutated_buffers:
                assign(buffers[n], next(out))
        # One multi-tensor copy rather than a copy per tensor: on CUDA a
        # handful of kernels instead of a cudaMemcpyAsync per parameter and
        # state (AdamW: three per parameter tensor).
        if targets:
            torch._foreach_copy_(targets, values)
        loss = next(out).clone()
        metrics = [next(out).clone() for _ in range(len(spec.metrics))]
    finally:
        if hasattr(out, "close"):
            out.close()
    for p in spec.params:
        p.grad = None
    return spec.metrics.pack(loss, metrics)


class HyperParameters(list):
    """The 0-d hyper-parameter tensors of a step (learning rates, betas,
    ...), reused between calls: views of one buffer, so that `write` sets
    them all with one copy. On CUDA that is one host-to-device copy per call
    instead of a fill kernel per value."""

    def __init__(self, count, device):
        self.buffer = torch.zeros(count, dtype=torch.float64, device=device)
        super().__init__(self.buffer[i] for i in range(count))
        # On the CPU, written through numpy: no tensor operation at all.
        self.host = self.buffer.numpy() if self.buffer.device.type == \
            "cpu" else None

    def write(self, values):
        values = [float(v) for v in values]
        if self.host is not None:
            self.host[:] = values
        else:
            # From pageable memory: the copy has read `values` when it
            # returns.
            self.buffer.copy_(torch.tensor(values, dtype=torch.float64))


def new_hyper(spec, device):
    return HyperParameters(spec.opt.num_hyper(), device)

