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
of _dp_collectives: `dist.all_reduce(view, async_op=True)` on a tensor view
of the bucket's memory, and `work.wait()`. target="cuda": --ga-lower-to-nvvm
lowers the buckets to NCCL calls on the step's streams, which
libGANcclRuntime.so forwards to torch.distributed on CUDA tensor views of
the buckets, in stream order (see _dp_collectives). ZeRO-1 is CPU only.

A data-parallel step saves (step.save) with its data-parallel contract;
load_step binds it to a process group (_dp_saved).

The ranks exchange their batch sizes and a hash of everything the compiled
step depends on (one all_gather) at the first call and whenever the shapes
of a rank's inputs change; ranks that compiled different steps fail with a
message naming the difference.
"""

import dataclasses
import math

import torch

from .. import driver
from ._common import CompileError
from ._dp_collectives import collectives_for, shard_rows
from ._dp_memory import report
from ._dp_shards import (_DEFAULT, _dist, _plain, exchange_shards,
                         global_shape, resolve_group, shard_arguments)
from ._step import CompiledTrainStep

def _mark_data_parallel(ir):
    """`ir` with the unit attribute `ga.data_parallel` on @train_step: its
    batch is the concatenation of the ranks' shards (--ga-micro-batch then
    loops over this rank's shard and all-reduces the reductions). Set through
    MLIR's Python API (torch-mlir's build of it), locations kept."""
    from torch_mlir import ir as mlir

    with mlir.Context() as context, mlir.Location.unknown():
        # A step with ga-mlir's own ops (ga.grouped_matmul of the MoE
        # experts), which torch-mlir's context does not know: kept as text.
        context.allow_unregistered_dialects = True
        module = mlir.Module.parse(ir)
        for op in module.body.operations:
            if op.operation.name == "func.func" and mlir.StringAttr(
                    op.attributes["sym_name"]).value == "train_step":
                op.attributes["ga.data_parallel"] = mlir.UnitAttr.get()
                return module.operation.get_asm(enable_debug_info=True)
    raise CompileError("internal error: no func.func @train_step in the "
                       "imported step",
                       code="internal-error")


def data_parallel_signature(variant, batch_dims, bucket_cap_mb):
    """What step.json records of a data-parallel step besides its layout
    (which has the global input shapes and N)."""
    return {"global_batch": variant.shard[2],
            "batch_dims": list(batch_dims),
            "bucket_cap_mb": bucket_cap_mb}


class DataParallelMixin:
    """What CompiledTrainStep does differently in a process group (mixed in
    by DataParallelTrainStep below)."""

    # Calls exchange shapes and add the shard's bounds to the arguments:
    # no fast path (_fastcall).
    _fast_calls = False

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
        self._collectives = None  # those of the last call
        self._exchanged = None  # local input shapes of the last exchange
        self._shard = None      # (begin, end, global batch size)

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
            "target": self.target,
        }

    def _exchange(self, inputs):
        """Batch sizes and signatures of all ranks: at the first call and
        when this rank's input shapes change (one all_gather)."""
        local = tuple((tuple(t.shape), t.dtype) for t in inputs)
        if local == self._exchanged:
            return
        fixed = self.micro_batches is not None and \
            self.micro_batch_size is None and self.max_memory is None
        self._shard = exchange_shards(
            self.process_group, inputs, self.batch_dims,
            self._signature(inputs), self.micro_batches if fixed else None)
        self._exchanged = local

    # -- hooks of CompiledTrainStep -----------------------------------------

    _guards_allowed = False  # a guard would read this rank's samples only

    def _key(self, inputs):
        begin, end, _ = self._shard
        return (tuple((global_shape(t, d, self._shard[2]), t.dtype)
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
                               f"{local} samples (rank {self.rank})",
                               code="too-few-samples")
        return n

    def _step_options(self, ir, n, batch_args, spec):
        ir, options = super()._step_options(ir, n, batch_args, spec)
        ir = _mark_data_parallel(ir)
        # The buckets' all-reduces: calls of torch.distributed's on the CPU
        # (--convert-ga-to-host-collectives); --ga-lower-to-nvvm lowers them
        # to NCCL on the streams itself.
        options = dataclasses.replace(
            options, bucket_size=int(self.bucket_cap_mb * (1 << 20)),
            host_collectives=self.target == "cpu")
        if self.shard_optimizer:
            options.shard_optimizer = self._shard_optimizer(spec)
        return ir, options

    def _shard_optimizer(self, spec):
        """--ga-shard-optimizer for this rank (a driver.ShardOptimizer): the
        parameters of rank >= 1 (0-d ones are updated whole on every rank)
        and their states of their own shape (step counts are updated whole
        as well), in the step's order of results (parameters, then their
        states) and arguments (parameters, frozen parameters, buffers,
        states)."""
        spec.opt.shard_rows = lambda rows: shard_rows(rows, self.world_size,
                                                      self.rank)
        num_params = len(spec.params)
        first_state = num_params + len(spec.frozen) + len(spec.buffer_names)
        params, results, args = [], [], []
        k = 0
        for i, p in enumerate(spec.params):
            if p.dim() >= 1:
                params.append(i)
                # The states of the parameter's shape (not a step count).
                for j, name in enumerate(spec.opt.state_names(i)):
                    if spec.opt.sharded(i, name):
                        results.append(num_params + k + j)
                        args.append(first_state + k + j)
            k += spec.num_states[i]
        return driver.ShardOptimizer(self.rank, self.world_size,
                                     tuple(params), tuple(results),
                                     tuple(args))

    def _call_arguments(self, variant, flat, descriptors):
        """The batch inputs as the global arguments the step reads rows
        [begin, end) of, and the two index arguments."""
        first = len(flat) - self.num_inputs - \
            variant.spec.num_random_args()
        arguments, self._keep = shard_arguments(
            self._shard, self.batch_dims, first, flat, descriptors)
        return arguments

    def __call__(self, *inputs):
        inputs = tuple(t.contiguous() for t in inputs)
        if len(inputs) != self.num_inputs:
            raise TypeError(f"expected {self.num_inputs} inputs, got "
                            f"{len(inputs)}")
        v = self._variant(inputs)  # the exchange, before any collective
        if getattr(v, "collectives", None) is None:
            v.collectives = collectives_for(self.process_group, self.target,
                                            v.path)
        self._collectives = v.collectives
        with v.collectives:
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
        ir, options = self._step_options(v.ir, v.micro_batches,
                                         v.batch_args, v.spec)
        return report(ir, options, v, self.num_inputs, self.options)

    def collectives_per_call(self):
        """(collectives, bytes) of the last call (the benchmark's count)."""
        if self._collectives is None:
            return 0, 0
        return self._collectives.count, self._collectives.bytes


class DataParallelTrainStep(DataParallelMixin, CompiledTrainStep):
    """The compiled step of one rank of a data-parallel group: call it with
    this rank's shard of the global batch (see the module docstring)."""

    def __init__(self, model, loss_fn, optimizer, example_inputs,
                 process_group, bucket_cap_mb=25, shard_optimizer=False,
                 **kwargs):
        self._setup_data_parallel(process_group, bucket_cap_mb,
                                  shard_optimizer)
        super().__init__(model, loss_fn, optimizer, example_inputs, **kwargs)

    def save(self, directory, *inputs):
        """Writes this rank's compiled step for `inputs` (default: the
        example inputs) as CompiledTrainStep.save does, marked
        data-parallel: `load_step` binds it to a process group (see
        _dp_saved). Its library does not depend on the rank or the world
        size, only on the global batch: one rank saves, every rank loads."""
        if self.shard_optimizer:
            raise CompileError(
                "step.save: a shard_optimizer=True (ZeRO-1) step is compiled "
                "for one rank of one world size (its rows of every "
                "parameter); saving it is not supported yet: save the step "
                "compiled without shard_optimizer",
                code="save-not-supported")
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        self._save(directory, v, data_parallel=data_parallel_signature(
            v, self.batch_dims, self.bucket_cap_mb))


def data_parallel_options(kwargs):
    """Pops the data-parallel options of compile_train_step from `kwargs`:
    (process group or None, bucket_cap_mb, shard_optimizer: False, True or
    "parameters" for shard="parameters")."""
    group = resolve_group(kwargs.pop("process_group", _DEFAULT))
    bucket_cap_mb = kwargs.pop("bucket_cap_mb", 25)
    shard_optimizer = kwargs.pop("shard_optimizer", False)
    shard = kwargs.pop("shard", None)
    if shard not in (None, "parameters"):
        raise CompileError(f"shard: None or 'parameters', not {shard!r}",
                           code="invalid-argument")
    if shard is not None:
        if group is None:
            raise CompileError(
                "shard='parameters' shards the parameters over the ranks of "
                "a process group: call compile_train_step inside an "
                "initialized torch.distributed process group",
                code="process-group-mismatch")
        shard_optimizer = shard
    if shard_optimizer and group is None:
        raise CompileError("shard_optimizer=True shards the optimizer state "
                           "over the ranks of a process group: call "
                           "compile_train_step inside an initialized "
                           "torch.distributed process group",
                           code="process-group-mismatch")
    return group, bucket_cap_mb, shard_optimizer
