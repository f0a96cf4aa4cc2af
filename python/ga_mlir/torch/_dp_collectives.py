"""The collectives of data-parallel steps, forwarded to torch.distributed.

CPU steps (--convert-ga-to-host-collectives) call gaHostAllReduceStart /
gaHostShardedStart after the micro-batch loop and gaHostAllReduceWait before
the first op that reads a bucket; libGAHostCollectives.so forwards them to
the callbacks of HostCollectives: `dist.all_reduce(view, async_op=True)` on
a tensor view of the bucket's memory, and `work.wait()`.

target="cuda" steps (--ga-lower-to-nvvm's --convert-ga-to-nccl) call
gaNcclAllReduce(stream, buffer, count, dtype, op) (sharded steps also
gaNcclReduceScatter and gaNcclAllGather) on a communication stream
forked from the step's stream, at the point of the last micro-batch where
the bucket is final (--ga-overlap-all-reduce), and make the step's stream
wait for that stream before the optimizer reads the bucket.
libGANcclRuntime.so forwards the call (gaNcclForwardAllReduce) to
DeviceCollectives, which enqueues `dist.all_reduce` of a CUDA tensor view of
the bucket with that stream as PyTorch's current stream and makes the
stream wait for it (`work.wait()`: for NCCL a stream dependency, no host
synchronization), so the collective keeps the place and the overlap the
compiled step gave it.
"""

import ctypes
import os
import sys
import threading

import torch

from .. import library_path
from ._common import CompileError

# The runtime's element type codes (--convert-ga-to-host-collectives).
_DTYPES = {0: torch.float32, 1: torch.float64, 2: torch.float16,
           3: torch.bfloat16, 4: torch.int8, 5: torch.int16, 6: torch.int32,
           7: torch.int64}

_START = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64,
                          ctypes.c_int32, ctypes.c_int32, ctypes.c_int64)
_WAIT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64)
_SHARDED = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64,
                            ctypes.c_int32, ctypes.c_int32, ctypes.c_int64,
                            ctypes.c_int32, ctypes.c_int64)

_runtimes = {}  # file name -> the library loaded with RTLD_GLOBAL
_runtime_lock = threading.Lock()


def _dist():
    import torch.distributed as dist
    return dist


def host_collectives_library():
    """Path of libGAHostCollectives.so: GA_HOST_COLLECTIVES_LIBRARY, or next
    to the ga-mlir C API library."""
    override = os.environ.get("GA_HOST_COLLECTIVES_LIBRARY")
    if override:
        return override
    return os.path.join(os.path.dirname(library_path()),
                        "libGAHostCollectives.so")


def _raise_failed(error, exc):
    """RuntimeError from `error`, the first failure of a collective during a
    call, unless the call itself raised (`exc`, __exit__'s arguments)."""
    if error is not None and exc[0] is None:
        raise RuntimeError(
            "ga-mlir: a collective of the data-parallel step failed "
            f"({type(error).__name__}: {error}); the step's updates of the "
            "parameters and optimizer states are not valid") from error


def load_global(path, what):
    """The runtime library at `path`, loaded once per process (by its file
    name, which is its soname) with RTLD_GLOBAL: a compiled step loaded
    later binds its calls to this copy (the loader reuses a loaded soname),
    so the callbacks registered here are the ones it calls."""
    name = os.path.basename(path)
    with _runtime_lock:
        if name not in _runtimes:
            try:
                _runtimes[name] = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as error:
                raise CompileError(f"cannot load {what} {path}: {error}",
                                   code="file-unreadable") \
                    from None
    return _runtimes[name]


def _load_runtime(path=None):
    """libGAHostCollectives.so (default: host_collectives_library()), its
    registration functions typed."""
    lib = load_global(path or host_collectives_library(),
                      "the host collectives runtime (build the "
                      "GAHostCollectives target, or set "
                      "GA_HOST_COLLECTIVES_LIBRARY)")
    lib.gaHostCollectivesRegister.argtypes = [_START, _WAIT]
    lib.gaHostCollectivesRegister.restype = None
    lib.gaHostCollectivesRegisterSharded.argtypes = [_SHARDED]
    lib.gaHostCollectivesRegisterSharded.restype = None
    return lib


def _host_view(pointer, count, dtype):
    """(a tensor over the `count` elements of runtime type code `dtype` at
    host address `pointer`, without a copy; the element size in bytes):
    what the compiled step hands a collective callback."""
    element = _DTYPES[dtype]
    size = torch.empty((), dtype=element).element_size()
    memory = (ctypes.c_char * (count * size)).from_address(pointer)
    return torch.frombuffer(memory, dtype=element, count=count), size


def _reduce_op(dist, op):
    """torch.distributed's reduction for the runtime's operation code (0 sum,
    1 mean: a sum divided after the wait, 2 max, 3 min)."""
    return {0: dist.ReduceOp.SUM, 1: dist.ReduceOp.SUM,
            2: dist.ReduceOp.MAX, 3: dist.ReduceOp.MIN}[op]


class HostCollectives:
    """The callbacks of one step: each bucket's all-reduce is launched
    asynchronously on a tensor view of its memory and waited for when the
    compiled step first needs it. Errors are kept and raised after the
    call. `count` counts the collectives launched (for benchmarks)."""

    def __init__(self, group, runtime=None):
        self.group = group
        self.runtime_path = runtime  # None: host_collectives_library()
        self.pending = {}
        self.error = None
        self.count = 0
        self.bytes = 0
        # Reduce-scatters and all-gathers: [calls, bytes of the whole
        # tensors, bytes this rank sends] (the other ranks' rows of a
        # reduce-scatter; its own rows to each other rank for an all-gather,
        # without gloo's padding).
        self.sharded_counts = {"reduce_scatter": [0, 0, 0],
                               "all_gather": [0, 0, 0]}
        self.start = _START(self._start)
        self.wait = _WAIT(self._wait)
        self.sharded = _SHARDED(self._sharded)

    def _issue(self, ident, launch):
        """Runs `launch` (which starts a collective and returns its pending
        entry and its size in bytes) and records it under `ident`: 0, or 1
        with the exception kept to be raised after the step's call."""
        try:
            entry, nbytes = launch()
            self.pending[ident] = entry
            self.count += 1
            self.bytes += nbytes
            return 0
        except BaseException as error:  # reported after the call
            self.error = self.error or error
            return 1

    def _start(self, pointer, count, dtype, op, ident):
        def launch():
            dist = _dist()
            view, size = _host_view(pointer, count, dtype)
            work = dist.all_reduce(view, op=_reduce_op(dist, op),
                                   group=self.group, async_op=True)
            return (work, view, op == 1), count * size
        return self._issue(ident, launch)

    def _sharded(self, pointer, count, dtype, op, ident, kind, rows):
        """ZeRO-1's collectives on a buffer of the whole tensor (`rows`
        rows): kind 0 reduce-scatters it (this rank's rows are reduced in
        place), kind 1 all-gathers it (this rank's rows are there; the
        others are filled in). gloo has no all-gather of unequal parts: the
        rows travel padded to the largest part."""
        def launch():
            dist = _dist()
            view, size = _host_view(pointer, count, dtype)
            world = dist.get_world_size(self.group)
            rank = dist.get_rank(self.group)
            per_row = count // rows
            bounds = [shard_rows(rows, world, r) for r in range(world)]
            parts = [view[b * per_row:e * per_row] for b, e in bounds]
            mine = parts[rank]
            counts = self.sharded_counts[
                "all_gather" if kind else "reduce_scatter"]
            counts[0] += 1
            counts[1] += count * size
            counts[2] += (mine.numel() * (world - 1) if kind else
                          count - mine.numel()) * size
            if kind == 0:
                out = torch.empty_like(mine)
                work = dist.reduce_scatter(out, [p.clone() for p in parts],
                                           op=_reduce_op(dist, op),
                                           group=self.group, async_op=True)

                def finish():
                    mine.copy_(out)
                    if op == 1:  # mean
                        mine.div_(world)
            else:
                longest = max(e - b for b, e in bounds) * per_row
                padded = torch.zeros(longest, dtype=view.dtype)
                padded[:mine.numel()] = mine
                out = torch.empty(longest * world, dtype=view.dtype)
                work = dist.all_gather_into_tensor(out, padded,
                                                   group=self.group,
                                                   async_op=True)

                def finish():
                    for r, part in enumerate(parts):
                        if r != rank:
                            part.copy_(out[r * longest:
                                           r * longest + part.numel()])
            return (work, finish), count * size
        return self._issue(ident, launch)

    def _wait(self, ident):
        entry = self.pending.pop(ident, None)
        if entry is None:
            return 1
        try:
            if len(entry) == 2:  # a sharded collective
                work, finish = entry
                work.wait()
                finish()
                return 0
            work, view, mean = entry
            work.wait()
            if mean:
                view.div_(_dist().get_world_size(self.group))
            return 0
        except BaseException as error:
            self.error = self.error or error
            return 1

    def __enter__(self):
        self.error = None
        self.count = self.bytes = 0
        for counts in self.sharded_counts.values():
            counts[:] = [0, 0, 0]
        runtime = self._runtime = _load_runtime(self.runtime_path)
        runtime.gaHostCollectivesRegister(self.start, self.wait)
        runtime.gaHostCollectivesRegisterSharded(self.sharded)
        return self

    def __exit__(self, *exc):
        for ident in list(self.pending):
            self._wait(ident)
        self._runtime.gaHostCollectivesRegister(_START(), _WAIT())
        self._runtime.gaHostCollectivesRegisterSharded(_SHARDED())
        _raise_failed(self.error, exc)
        return False


def shard_rows(rows, world, rank):
    """Rows [begin, end) of `rows` that rank `rank` of `world` holds (the
    split of ga.reduce_scatter / ga.all_gather)."""
    return rank * rows // world, (rank + 1) * rows // world




# gaNcclAllReduce's operands (lib/Runtime/NCCL/GANcclRuntime.h).
_NCCL_ALL_REDUCE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_int64,
                                    ctypes.c_int32, ctypes.c_int32)
# NCCL's ncclDataType_t and ncclRedOp_t codes, as --convert-ga-to-nccl
# emits them.
_NCCL_DTYPES = {0: torch.int8, 1: torch.uint8, 2: torch.int32,
                4: torch.int64, 6: torch.float16, 7: torch.float32,
                8: torch.float64, 9: torch.bfloat16}
_NCCL_SUM, _NCCL_MAX, _NCCL_MIN, _NCCL_AVG = 0, 2, 3, 4


def nccl_runtime_library(step_library):
    """libGANcclRuntime.so beside `step_library` (ga-compile copies it
    there, and step.save with it)."""
    return os.path.join(os.path.dirname(step_library), "libGANcclRuntime.so")


_NCCL_REDUCE_SCATTER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p,
                                        ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_int64, ctypes.c_int32,
                                        ctypes.c_int32)
_NCCL_ALL_GATHER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_int64, ctypes.c_int32)


def _device_view(pointer, count, dtype):
    """A CUDA tensor over the `count` elements of NCCL type code `dtype` at
    device address `pointer`, without a copy."""
    from ._call import _DeviceArray
    element = _NCCL_DTYPES[dtype]
    device = torch.device("cuda", torch.cuda.current_device())
    # __cuda_array_interface__ has no bf16: the memory is taken as an
    # element type of the same size, then viewed as its own.
    size = torch.empty((), dtype=element).element_size()
    carrier = {1: torch.bool, 2: torch.float16, 4: torch.int32,
               8: torch.int64}[size]
    return torch.as_tensor(_DeviceArray(pointer, (count,), carrier),
                           device=device).view(element)


class DeviceCollectives:
    """The collectives of one target="cuda" step (see the module
    docstring): libGANcclRuntime.so's gaNcclAllReduce, gaNcclReduceScatter
    and gaNcclAllGather forwarded to torch.distributed on CUDA tensor views
    of the buffers, on the stream the compiled step passes. Errors are kept
    and raised after the call. `count` and `bytes` count the all-reduces of
    the last call, `sharded_counts` the sharded collectives as
    HostCollectives does."""

    def __init__(self, group, runtime):
        self.group = group
        self.runtime_path = runtime
        self.error = None
        self.count = self.bytes = 0
        self.sharded_counts = {"reduce_scatter": [0, 0, 0],
                               "all_gather": [0, 0, 0]}
        self.forward = _NCCL_ALL_REDUCE(self._all_reduce)
        self.forward_scatter = _NCCL_REDUCE_SCATTER(self._reduce_scatter)
        self.forward_gather = _NCCL_ALL_GATHER(self._all_gather)

    def _forwarded(self, name, stream, collective):
        """Runs `collective(dist)` (which enqueues its work and returns the
        bytes of the buffer it reduced or gathered) after what the step
        enqueued on `stream`; the step's later work on `stream` waits for it
        (for NCCL, work.wait() is a stream dependency, not a host wait). A
        null stream is a caller without one: the values are ready on
        return. 0, or 1 after keeping the error."""
        try:
            dist = _dist()
            device = torch.device("cuda", torch.cuda.current_device())
            if stream:
                with torch.cuda.stream(torch.cuda.ExternalStream(
                        stream, device=device)):
                    collective(dist)
            else:
                torch.cuda.synchronize(device)
                collective(dist)
                torch.cuda.synchronize(device)
            return 0
        except BaseException as error:  # also raised after the call
            # The compiled step stops at a failed status (cf.assert naming
            # "the message of the NCCL runtime above"): this is that message.
            sys.stderr.write(f"ga NCCL runtime: {name} forwarded to "
                             f"torch.distributed failed: "
                             f"{type(error).__name__}: {error}\n")
            self.error = self.error or error
            return 1

    @staticmethod
    def _reduce_op(dist, op):
        return {_NCCL_SUM: dist.ReduceOp.SUM, _NCCL_AVG: dist.ReduceOp.SUM,
                _NCCL_MAX: dist.ReduceOp.MAX,
                _NCCL_MIN: dist.ReduceOp.MIN}[op]

    def _all_reduce(self, stream, pointer, count, dtype, op):
        def collective(dist):
            view = _device_view(pointer, count, dtype)
            work = dist.all_reduce(view, op=self._reduce_op(dist, op),
                                   group=self.group, async_op=True)
            work.wait()
            if op == _NCCL_AVG:
                view.div_(dist.get_world_size(self.group))
            self.count += 1
            self.bytes += count * view.element_size()
        return self._forwarded("gaNcclAllReduce", stream, collective)

    def _reduce_scatter(self, stream, source, target, count, dtype, op):
        def collective(dist):
            world = dist.get_world_size(self.group)
            whole = _device_view(source, count * world, dtype)
            mine = _device_view(target, count, dtype)
            # `mine` may be this rank's part of `whole` (in place): the
            # reduction goes to a buffer of its own, then into place.
            out = torch.empty_like(mine)
            work = dist.reduce_scatter_tensor(
                out, whole, op=self._reduce_op(dist, op), group=self.group,
                async_op=True)
            work.wait()
            mine.copy_(out)
            if op == _NCCL_AVG:
                mine.div_(world)
            self._count("reduce_scatter", whole, count * (world - 1))
        return self._forwarded("gaNcclReduceScatter", stream, collective)

    def _all_gather(self, stream, source, target, count, dtype):
        def collective(dist):
            world = dist.get_world_size(self.group)
            mine = _device_view(source, count, dtype)
            whole = _device_view(target, count * world, dtype)
            # `mine` may be this rank's part of `whole` (in place).
            work = dist.all_gather_into_tensor(whole, mine.clone(),
                                               group=self.group,
                                               async_op=True)
            work.wait()
            self._count("all_gather", whole, count * (world - 1))
        return self._forwarded("gaNcclAllGather", stream, collective)

    def _count(self, kind, whole, sent):
        counts = self.sharded_counts[kind]
        counts[0] += 1
        counts[1] += whole.numel() * whole.element_size()
        counts[2] += sent * whole.element_size()

    def __enter__(self):
        from ._call import require_cuda
        require_cuda()  # before loading a runtime that needs CUDA's
        self.error = None
        self.count = self.bytes = 0
        for counts in self.sharded_counts.values():
            counts[:] = [0, 0, 0]
        runtime = self._runtime = load_global(
            self.runtime_path, "the NCCL runtime of the step")
        runtime.gaNcclForwardAllReduce.argtypes = [_NCCL_ALL_REDUCE]
        runtime.gaNcclForwardAllReduce.restype = None
        runtime.gaNcclForwardAllReduce(self.forward)
        runtime.gaNcclForwardSharded.argtypes = [_NCCL_REDUCE_SCATTER,
                                                 _NCCL_ALL_GATHER]
        runtime.gaNcclForwardSharded.restype = None
        runtime.gaNcclForwardSharded(self.forward_scatter,
                                     self.forward_gather)
        return self

    def __exit__(self, *exc):
        self._runtime.gaNcclForwardAllReduce(_NCCL_ALL_REDUCE())
        self._runtime.gaNcclForwardSharded(_NCCL_REDUCE_SCATTER(),
                                           _NCCL_ALL_GATHER())
        _raise_failed(self.error, exc)
        return False


def collectives_for(group, target, step_library):
    """The collectives of a step of `target` whose library is
    `step_library` (compiled in this process or loaded from a directory:
    the runtimes beside it)."""
    if target == "cuda":
        return DeviceCollectives(group, nccl_runtime_library(step_library))
    return HostCollectives(group, os.path.join(
        os.path.dirname(step_library), "libGAHostCollectives.so"))
