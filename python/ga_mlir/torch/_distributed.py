"""Data-parallel training steps inside a torch.distributed process group.

Inside an initialized default process group (`torchrun`), `compile_train_step`
returns a `DataParallelTrainStep`: each rank calls it with its own shard of
the global batch, and one call does what one full-batch step on the
concatenation of all ranks' shards (in rank order) does. The loss as written
means the loss of the GLOBAL batch: a mean over samples is normalised by the
global number of samples, a token mean by the global token count, clipping
uses the global norm, BatchNorm statistics (recompute_statistics=True) are
the global batch's.

How (docs/Distributed.md): the step is traced at the GLOBAL batch shape, so
every constant that PyTorch derives from the batch size is the global one;
`--ga-accumulate` with `data-parallel=1` makes each rank loop over N
micro-batches of its own samples [begin, end) (two index arguments) and
all-reduces every reduction over the batch after its loop: the gradients
and the loss after the main loop, data-only statistics (token counts) after
the statistics loop, before the main loop. `--ga-bucket-gradients` coalesces
the collectives of one loop into buckets (DDP's 25 MiB by default,
`bucket_cap_mb`), and `--convert-ga-to-host-collectives` lowers each bucket
to a start call right after the loop and a wait call before the first op
that reads it. libGAHostCollectives.so forwards both to the callbacks
registered here: `dist.all_reduce(view, async_op=True)` on a tensor view of
the bucket's memory, and `work.wait()`.

The ranks exchange their batch sizes and a hash of everything the compiled
step depends on (one all_gather) at the first call and whenever the shapes
of a rank's inputs change; ranks that compiled different steps fail with a
message naming the difference.
"""

import ctypes
import hashlib
import json
import math
import os
import threading

import torch

from .. import library_path
from ._common import CompileError
from ._dp_memory import report
from ._step import CompiledTrainStep

_DEFAULT = object()  # process_group not given: the default group if any

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

_runtime = None
_runtime_lock = threading.Lock()


def _dist():
    import torch.distributed as dist
    return dist


def resolve_group(process_group):
    """The process group a step trains over, or None (one process):
    `process_group` not given means the default group when one is
    initialized; None opts out."""
    if process_group is None:
        return None
    dist = _dist()
    initialized = dist.is_available() and dist.is_initialized()
    if process_group is _DEFAULT:
        return dist.group.WORLD if initialized else None
    if not initialized:
        raise CompileError("process_group was given, but torch.distributed "
                           "has no initialized process group")
    return process_group


def host_collectives_library():
    """Path of libGAHostCollectives.so: GA_HOST_COLLECTIVES_LIBRARY, or next
    to the ga-mlir C API library."""
    override = os.environ.get("GA_HOST_COLLECTIVES_LIBRARY")
    if override:
        return override
    return os.path.join(os.path.dirname(library_path()),
                        "libGAHostCollectives.so")


def _load_runtime():
    """The runtime, loaded once with RTLD_GLOBAL: compiled steps leave its
    two entry points undefined and find them there."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            path = host_collectives_library()
            try:
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as error:
                raise CompileError(
                    f"cannot load the host collectives runtime {path}: "
                    f"{error} (build the GAHostCollectives target, or set "
                    "GA_HOST_COLLECTIVES_LIBRARY)") from None
            lib.gaHostCollectivesRegister.argtypes = [_START, _WAIT]
            lib.gaHostCollectivesRegister.restype = None
            lib.gaHostCollectivesRegisterSharded.argtypes = [_SHARDED]
            lib.gaHostCollectivesRegisterSharded.restype = None
            _runtime = lib
    return _runtime


def _host_view(pointer, count, dtype):
    """(a tensor over the `count` elements of runtime type code `dtype` at
    host address `pointer`, without a copy; the element size in bytes):
    what the compiled step hands a collective callback."""
    element = _DTYPES[dtype]
    size = torch.empty((), dtype=element).element_size()
    memory = (ctypes.c_char * (count * size)).from_address(pointer)
    return torch.frombuffer(memory, dtype=element, count=count), size


class _Collectives:
    """The callbacks of one step: each bucket's all-reduce is launched
    asynchronously on a tensor view of its memory and waited for when the
    compiled step first needs it. Errors are kept and raised after the
    call. `count` counts the collectives launched (for benchmarks)."""

    def __init__(self, group):
        self.group = group
        self.pending = {}
        self.error = None
        self.count = 0
        self.bytes = 0
        self.start = _START(self._start)
        self.wait = _WAIT(self._wait)
        self.sharded = _SHARDED(self._sharded)

    def _start(self, pointer, count, dtype, op, ident):
        try:
            dist = _dist()
            view, size = _host_view(pointer, count, dtype)
            reduce_op = {0: dist.ReduceOp.SUM, 1: dist.ReduceOp.SUM,
                         2: dist.ReduceOp.MAX, 3: dist.ReduceOp.MIN}[op]
            work = dist.all_reduce(view, op=reduce_op, group=self.group,
                                   async_op=True)
            self.pending[ident] = (work, view, op == 1)
            self.count += 1
            self.bytes += count * size
            return 0
        except BaseException as error:  # reported after the call
            self.error = self.error or error
            return 1

    def _sharded(self, pointer, count, dtype, op, ident, kind, rows):
        """ZeRO-1's collectives on a buffer of the whole tensor (`rows`
        rows): kind 0 reduce-scatters it (this rank's rows are reduced in
        place), kind 1 all-gathers it (this rank's rows are there; the
        others are filled in). gloo has no all-gather of unequal parts: the
        rows travel padded to the largest part."""
        try:
            dist = _dist()
            view, size = _host_view(pointer, count, dtype)
            world = dist.get_world_size(self.group)
            rank = dist.get_rank(self.group)
            per_row = count // rows
            bounds = [shard_rows(rows, world, r) for r in range(world)]
            parts = [view[b * per_row:e * per_row] for b, e in bounds]
            mine = parts[rank]
            if kind == 0:
                reduce_op = {0: dist.ReduceOp.SUM, 1: dist.ReduceOp.SUM,
                             2: dist.ReduceOp.MAX, 3: dist.ReduceOp.MIN}[op]
                out = torch.empty_like(mine)
                work = dist.reduce_scatter(out, [p.clone() for p in parts],
                                           op=reduce_op, group=self.group,
                                           async_op=True)

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
            self.pending[ident] = (work, finish)
            self.count += 1
            self.bytes += count * size
            return 0
        except BaseException as error:  # reported after the call
            self.error = self.error or error
            return 1

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
        runtime = _load_runtime()
        runtime.gaHostCollectivesRegister(self.start, self.wait)
        runtime.gaHostCollectivesRegisterSharded(self.sharded)
        return self

    def __exit__(self, *exc):
        for ident in list(self.pending):
            self._wait(ident)
        _runtime.gaHostCollectivesRegister(_START(), _WAIT())
        _runtime.gaHostCollectivesRegisterSharded(_SHARDED())
        if self.error is not None and exc[0] is None:
            raise RuntimeError(
                "ga-mlir: a collective of the data-parallel step failed "
                f"({type(self.error).__name__}: {self.error}); the step's "
                "updates of the parameters and optimizer states are not "
                "valid") from self.error
        return False


def shard_rows(rows, world, rank):
    """Rows [begin, end) of `rows` that rank `rank` of `world` holds (the
    split of ga.reduce_scatter / ga.all_gather)."""
    return rank * rows // world, (rank + 1) * rows // world


def _plain(value):
    """`value` as JSON-able data for the signature."""
    if isinstance(value, torch.Tensor):
        return ["tensor", list(value.shape), str(value.dtype),
                value.tolist() if value.numel() == 1 else None]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return f"<{type(value).__name__}>"


def _first_difference(a, b, path=""):
    """The first key path at which the JSON-able values `a` and `b` differ,
    with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key),
                                         f"{path}.{key}" if path else key)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) \
            and path in ("parameters", "buffers", "inputs"):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"{path}[{i}]", x, y
    return path, a, b


def _mark_data_parallel(ir):
    """`ir` with the unit attribute `ga.data_parallel` on @train_step: its
    batch is the concatenation of the ranks' shards (--ga-micro-batch then
    loops over this rank's shard and all-reduces the reductions). Set through
    MLIR's Python API (torch-mlir's build of it), locations kept."""
    from torch_mlir import ir as mlir

    with mlir.Context(), mlir.Location.unknown():
        module = mlir.Module.parse(ir)
        for op in module.body.operations:
            if op.operation.name == "func.func" and mlir.StringAttr(
                    op.attributes["sym_name"]).value == "train_step":
                op.attributes["ga.data_parallel"] = mlir.UnitAttr.get()
                return module.operation.get_asm(enable_debug_info=True)
    raise CompileError("internal error: no func.func @train_step in the "
                       "imported step")


class DataParallelMixin:
    """What CompiledTrainStep does differently in a process group (mixed in
    by DataParallelTrainStep below)."""

    def _setup_data_parallel(self, group, bucket_cap_mb,
                             shard_optimizer=False):
        if isinstance(bucket_cap_mb, bool) or not isinstance(
                bucket_cap_mb, (int, float)) or bucket_cap_mb < 0:
            raise TypeError("bucket_cap_mb: a number of MiB >= 0 (0: one "
                            f"collective per gradient), not {bucket_cap_mb!r}")
        dist = _dist()
        self.process_group = group
        self.world_size = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.bucket_cap_mb = bucket_cap_mb
        if not isinstance(shard_optimizer, bool):
            raise TypeError("shard_optimizer: True or False, not "
                            f"{shard_optimizer!r}")
        self.shard_optimizer = shard_optimizer
        self._collectives = _Collectives(group)
        self._exchanged = None  # local input shapes of the last exchange
        self._shard = None      # (begin, end, global batch size)
        _load_runtime()

    # -- the exchange ------------------------------------------------------

    def _signature(self, inputs):
        """Everything the compiled step depends on besides the rank's batch
        size, as JSON-able data."""
        opt = self.optimizer
        groups = [{k: _plain(v) for k, v in sorted(g.items())
                   if k != "params"} for g in opt.param_groups]
        return {
            "inputs": [[["B" if i == d else s for i, s in
                         enumerate(t.shape)], str(t.dtype)]
                       for t, d in zip(inputs, self.batch_dims)],
            "batch_dims": list(self.batch_dims),
            "micro_batches": self.micro_batches,
            "micro_batch_size": self.micro_batch_size,
            "max_memory": _plain(self.max_memory),
            "max_grad_norm": self.max_grad_norm,
            "indexing": self.indexing,
            "in_place": self.in_place,
            "bucket_cap_mb": self.bucket_cap_mb,
            "shard_optimizer": self.shard_optimizer,
            "options": {k: _plain(v) for k, v in sorted(self.options.items())},
            "parameters": [[n, list(p.shape), str(p.dtype), p.requires_grad]
                           for n, p in self.model.named_parameters()],
            "buffers": [[n, list(b.shape), str(b.dtype)]
                        for n, b in self.model.named_buffers()],
            "training": [m.training for m in self.model.modules()],
            "optimizer": [type(opt).__name__, groups],
            "world_size": self.world_size,
        }

    def _exchange(self, inputs):
        """Batch sizes and signatures of all ranks: at the first call and
        when this rank's input shapes change (one all_gather)."""
        local = tuple((tuple(t.shape), t.dtype) for t in inputs)
        if local == self._exchanged:
            return
        sizes = {t.shape[d] for t, d in zip(inputs, self.batch_dims)}
        if len(sizes) != 1:
            raise CompileError(f"inputs disagree on the batch size: {sizes}")
        size = sizes.pop()
        signature = self._signature(inputs)
        digest = hashlib.sha256(json.dumps(signature, sort_keys=True)
                                .encode()).digest()
        words = [int.from_bytes(digest[i:i + 7], "little") for i in (0, 7)]
        dist = _dist()
        mine = torch.tensor([size] + words, dtype=torch.int64)
        everyone = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(everyone, mine, group=self.process_group)
        if any(not torch.equal(e[1:], mine[1:]) for e in everyone):
            described = [None] * self.world_size
            dist.all_gather_object(described, signature,
                                   group=self.process_group)
            other = next(r for r, e in enumerate(everyone)
                         if not torch.equal(e[1:], everyone[0][1:]))
            where, a, b = _first_difference(described[0], described[other])
            raise CompileError(
                f"the ranks of the data-parallel step were compiled "
                f"differently: {where} is {json.dumps(a)} on rank 0 but "
                f"{json.dumps(b)} on rank {other} (every rank must compile "
                "the same step: same model, optimizer, options and input "
                "shapes except the batch size)")
        batch_sizes = [int(e[0]) for e in everyone]
        empty = [r for r, s in enumerate(batch_sizes) if s < 1]
        if empty:
            raise CompileError(f"ranks {empty} have no sample: every rank "
                               "needs at least one sample per step")
        if self.micro_batches is not None and self.micro_batch_size is None \
                and self.max_memory is None:
            # Raised on every rank, not only on the one that is short.
            short = [r for r, s in enumerate(batch_sizes)
                     if s < self.micro_batches]
            if short:
                raise CompileError(
                    f"micro_batches={self.micro_batches} but ranks {short} "
                    f"hold fewer samples ({[batch_sizes[r] for r in short]})"
                    ": every rank runs N micro-batches of its shard")
        begin = sum(batch_sizes[:self.rank])
        self._shard = (begin, begin + size, sum(batch_sizes))
        self._exchanged = local

    # -- hooks of CompiledTrainStep -----------------------------------------

    def _global_shape(self, t, d):
        shape = list(t.shape)
        shape[d] = self._shard[2]
        return tuple(shape)

    def _key(self, inputs):
        begin, end, _ = self._shard
        return (tuple((self._global_shape(t, d), t.dtype)
                      for t, d in zip(inputs, self.batch_dims)),
                super()._key(inputs)[1], end - begin)

    def _variant(self, inputs):
        self._exchange(inputs)
        key = self._key(inputs)
        if key in self._variants:
            return self._variants[key]
        # Traced at the global shape, on this rank's samples repeated (the
        # trace does not depend on the values; a probe runs them).
        tiled = []
        for t, d in zip(inputs, self.batch_dims):
            reps = -(-self._shard[2] // t.shape[d])
            tiled.append(torch.cat([t] * reps, dim=d).narrow(
                d, 0, self._shard[2]).contiguous())
        variant = super()._variant(tuple(tiled))
        variant.shard = self._shard  # for memory_report
        return variant

    def _micro_batch_count(self, ir, batch_args, batch):
        begin, end, total = self._shard
        local = end - begin
        if self.micro_batch_size is not None and self.micro_batches is None \
                and self.max_memory is None:
            n = -(-local // self.micro_batch_size)
        elif self.max_memory is None and self.micro_batches is not None \
                and self.micro_batch_size is None:
            n = self.micro_batches
        else:
            # The budget fits micro-batches of B / N samples of the global
            # step: the same size here.
            chosen = super()._micro_batch_count(ir, batch_args, batch)
            n = max(1, math.ceil(local * chosen / total))
        if not 1 <= n <= local:
            raise CompileError(f"{n} micro-batches for this rank's "
                               f"{local} samples (rank {self.rank})")
        return n

    def _step_pipelines(self, ir, n, batch_args, spec):
        ir, (accumulate, lower) = super()._step_pipelines(ir, n, batch_args,
                                                          spec)
        ir = _mark_data_parallel(ir)
        if self.shard_optimizer:
            accumulate = accumulate[:-1] + "," + self._shard_pass(spec) + ")"
        return ir, (accumulate, f"{self._collectives_pipeline()},{lower}")

    def _collectives_pipeline(self):
        """Bucketing and the host lowering of the collectives."""
        bucket = int(self.bucket_cap_mb * (1 << 20))
        return ("convert-ga-to-host-collectives" if bucket == 0 else
                "func.func(ga-bucket-gradients{bucket-size="
                f"{bucket}}}),convert-ga-to-host-collectives")

    def _shard_pass(self, spec):
        """--ga-shard-optimizer for this rank: the parameters of rank >= 1
        (0-d ones are updated whole on every rank) and their states, in
        the step's order of results (parameters, then their states) and
        arguments (parameters, frozen parameters, buffers, states)."""
        spec.opt.shard_rows = lambda rows: shard_rows(rows, self.world_size,
                                                      self.rank)
        num_params = len(spec.params)
        first_state = num_params + len(spec.frozen) + len(spec.buffer_names)
        params, results, args = [], [], []
        k = 0
        for i, p in enumerate(spec.params):
            if p.dim() >= 1:
                params.append(i)
                for j in range(spec.num_states[i]):
                    results.append(num_params + k + j)
                    args.append(first_state + k + j)
            k += spec.num_states[i]
        options = [f"rank={self.rank}", f"world={self.world_size}"]
        for name, values in (("params", params), ("state-results", results),
                             ("state-args", args)):
            if values:
                options.append(f"{name}={','.join(map(str, values))}")
        return f"ga-shard-optimizer{{{' '.join(options)}}}"

    def _call_arguments(self, variant, flat, descriptors):
        """The batch inputs as the global arguments the step reads rows
        [begin, end) of, and the two index arguments."""
        begin, end, total = self._shard
        first = len(flat) - self.num_inputs - \
            variant.spec.num_random_args()
        keep = []
        for i, d in enumerate(self.batch_dims):
            t = flat[first + i]
            desc = descriptors[first + i]
            shift = begin * t.stride(d) * t.element_size()
            if d == 0 and shift <= t.data_ptr():
                # Row i of the global batch is row i - begin of the shard;
                # the step reads no other row.
                desc.allocated = desc.aligned = t.data_ptr() - shift
                desc.sizes[0] = total
            else:
                # Another batch dimension: the static strides of the global
                # type differ from the shard's, so the shard is copied into
                # its place in a global tensor.
                full = t.new_zeros(self._global_shape(t, d))
                full.narrow(d, begin, end - begin).copy_(t)
                keep.append(full)
                descriptors[first + i] = type(desc)()
                new = descriptors[first + i]
                new.allocated = new.aligned = full.data_ptr()
                new.offset = 0
                for k, (s, st) in enumerate(zip(full.shape, full.stride())):
                    new.sizes[k] = s
                    new.strides[k] = st
        self._keep = keep
        return list(descriptors) + [ctypes.c_int64(begin),
                                    ctypes.c_int64(end)]

    def __call__(self, *inputs):
        inputs = tuple(t.contiguous() for t in inputs)
        if len(inputs) == self.num_inputs:
            self._variant(inputs)  # the exchange, before any collective
        with self._collectives:
            loss = super().__call__(*inputs)
        self._keep = []
        return loss

    def memory_report(self, *inputs):
        """--ga-memory-report of this rank's step as compiled (a dict, as
        CompiledTrainStep.memory_report) for its shard of `inputs` (default:
        the example inputs' shard; with inputs, every rank must call it, as
        a call). The step's micro-batches have run-time sizes; the report
        binds this rank's [begin, end) and counts each temporary at its
        largest micro-batch (see _dp_memory). With shard_optimizer=True its
        optimizer_state holds this rank's rows of the state."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        ir, (accumulate, _) = self._step_pipelines(
            v.ir, v.micro_batches, v.batch_args, v.spec)
        return report(ir, accumulate, self._collectives_pipeline(), v,
                      self.num_inputs, self.options)

    def collectives_per_call(self):
        """(collectives, bytes) of the last call (the benchmark's count)."""
        return self._collectives.count, self._collectives.bytes


class DataParallelTrainStep(DataParallelMixin, CompiledTrainStep):
    """The compiled step of one rank of a data-parallel group: call it with
    this rank's shard of the global batch (see the module docstring)."""

    def __init__(self, model, loss_fn, optimizer, example_inputs,
                 process_group, bucket_cap_mb=25, shard_optimizer=False,
                 **kwargs):
        if kwargs.get("target", "cpu") != "cpu":
            # The collectives are host calls into torch.distributed; the GPU
            # step's NCCL path is not wired to a process group yet.
            raise CompileError(
                "compile_train_step: a data-parallel step (inside an "
                "initialized torch.distributed process group) compiles for "
                "target='cpu' only so far; pass process_group=None to "
                "compile this rank's step alone")
        self._setup_data_parallel(process_group, bucket_cap_mb,
                                  shard_optimizer)
        super().__init__(model, loss_fn, optimizer, example_inputs, **kwargs)

    def save(self, directory, *inputs):
        """Refused: the saved signature has no process group, so a loaded
        step would call no collective and each rank would silently train
        alone."""
        raise CompileError(
            "step.save: this step is data-parallel (compiled inside a "
            "torch.distributed process group); saving such a step is not "
            "supported yet (load_step would run it without its collectives, "
            "each rank training alone): compile it with process_group=None "
            "to save a single-process step")


def data_parallel_options(kwargs):
    """Pops the data-parallel options of compile_train_step from `kwargs`:
    (process group or None, bucket_cap_mb, shard_optimizer)."""
    group = resolve_group(kwargs.pop("process_group", _DEFAULT))
    bucket_cap_mb = kwargs.pop("bucket_cap_mb", 25)
    shard_optimizer = kwargs.pop("shard_optimizer", False)
    if shard_optimizer and group is None:
        raise CompileError("shard_optimizer=True shards the optimizer state "
                           "over the ranks of a process group: call "
                           "compile_train_step inside an initialized "
                           "torch.distributed process group")
    return group, bucket_cap_mb, shard_optimizer
