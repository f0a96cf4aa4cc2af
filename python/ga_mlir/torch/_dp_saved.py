"""Saved data-parallel steps: one rank saves, every rank loads.

A data-parallel step's library (see _distributed) is traced at the global
batch shape and reads rows [begin, end) of it, two run-time arguments; its
collectives are calls that the frontend forwards to torch.distributed. So
it depends on the global batch size and N, not on the world size or the
rank: `DataParallelTrainStep.save` writes it with `data_parallel` in
step.json (the global batch size, the bucket size it was compiled with),
and `load_step(dir, model, optimizer)` inside an initialized process group
returns a LoadedDataParallelStep bound to the default group
(`process_group=` picks another). Each rank calls it with its shard; the
ranks exchange their batch sizes and the saved library's digest at the first
call and when shapes change (the shards must add up to the global batch and
hold N samples each), then every call does what the compiled data-parallel
step does: one full-batch step on the concatenation of the shards.

A shard="parameters" step (_fsdp) is compiled for one rank of one world
size (its library takes and returns that rank's rows of every sharded
parameter): every rank saves its own, marked with its rank, the world size
and the whole shapes of the sharded parameters; `load_step` of it returns a
LoadedShardedStep on that rank of a group of that size only (any other is a
CompileError naming both), which cuts the model's whole parameters to the
rank's rows (as the compiled step leaves them) before it checks them.

Loading a data-parallel step outside a process group (or with
process_group=None) is refused: it would train this rank alone on a batch
that is not the global one. A single-process step loaded inside an
initialized default group is refused too unless `process_group=None` says
that this rank trains alone (the opt-out of compile_train_step).
"""

import torch

from ._call import call_step
from ._common import CompileError
from ._dp_collectives import collectives_for, shard_rows
from ._layout import check_tensor
from ._dp_shards import (_DEFAULT, _dist, exchange_shards, resolve_group,
                         shard_arguments)
from ._saved import LoadedTrainStep, _read_signature


def load(directory, model, optimizer, process_group=_DEFAULT):
    """load_step: a LoadedTrainStep, or a LoadedDataParallelStep for a step
    saved data-parallel (see the module docstring)."""
    signature = _read_signature(directory)
    data_parallel = signature.get("data_parallel")
    dist = _dist()
    initialized = dist.is_available() and dist.is_initialized()
    if data_parallel is None:
        if process_group is _DEFAULT and initialized:
            raise CompileError(
                "load_step: this step was saved by a single process, and "
                "torch.distributed has an initialized process group: it "
                "would train this rank alone, synchronizing nothing. Pass "
                "process_group=None to do that, or save the step compiled "
                "inside the process group (a data-parallel step)",
                code="process-group-mismatch")
        if process_group not in (None, _DEFAULT):
            raise CompileError(
                "load_step: process_group was given, but this step was "
                "saved by a single process (it calls no collective): save "
                "the step compiled inside the process group",
                code="process-group-mismatch")
        return LoadedTrainStep(directory, model, optimizer, signature)
    group = resolve_group(process_group)
    if group is None:
        raise CompileError(
            "load_step: this step is data-parallel (saved from a "
            "torch.distributed process group, global batch of "
            f"{data_parallel['global_batch']} samples): load it inside an "
            "initialized process group (torchrun, then "
            "torch.distributed.init_process_group), on every rank",
            code="process-group-mismatch")
    if "sharded" in data_parallel:
        return LoadedShardedStep(directory, model, optimizer, signature,
                                 group)
    return LoadedDataParallelStep(directory, model, optimizer, signature,
                                  group)


class LoadedDataParallelStep(LoadedTrainStep):
    """A saved data-parallel step bound to a process group: call it on every
    rank with the rank's shard of the global batch."""

    def __init__(self, directory, model, optimizer, signature, group):
        super().__init__(directory, model, optimizer, signature)
        dist = _dist()
        self.process_group = group
        self.world_size = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.data_parallel = signature["data_parallel"]
        self.batch_dims = [d for _, _, d in self.layout.inputs]
        self._digest = signature["sha256"]
        self._exchanged = None
        self._shard = None
        self._collectives = collectives_for(group, self.target,
                                            self.library_path)

    def _check_local(self, inputs):
        """Each input as saved but for its batch dimension."""
        saved = self.layout.inputs
        if len(inputs) != len(saved):
            raise TypeError(f"step: expected {len(saved)} inputs, got "
                            f"{len(inputs)}")
        for i, (t, (shape, dtype, d)) in enumerate(zip(inputs, saved)):
            local = list(shape)
            local[d] = t.shape[d] if t.dim() > d else -1
            check_tensor(t, local, dtype, f"step: input {i}",
                         f"this rank's shard of the saved step's {shape} "
                         f"{dtype} (batch dimension {d}) was expected")

    def _exchange(self, inputs):
        local = tuple((tuple(t.shape), t.dtype) for t in inputs)
        if local == self._exchanged:
            return
        signature = {"library": self._digest,
                     "data_parallel": self.data_parallel,
                     "inputs": [["B" if i == d else s for i, s in
                                 enumerate(shape)] + [dtype, d]
                                for shape, dtype, d in self.layout.inputs]}
        shard = exchange_shards(self.process_group, inputs, self.batch_dims,
                                signature, self.micro_batches)
        total = self.data_parallel["global_batch"]
        if shard[2] != total:
            raise CompileError(
                f"step: the ranks' shards hold {shard[2]} samples in all; "
                f"the saved data-parallel step was compiled for a global "
                f"batch of {total} (a saved step is not traced again)",
                code="step-signature-mismatch")
        self._shard, self._exchanged = shard, local

    def __call__(self, *inputs):
        self._check_local(inputs)
        inputs = tuple(t.contiguous() for t in inputs)
        self._exchange(inputs)
        keep = []

        def arguments(flat, descriptors):
            parameters, held = shard_arguments(
                self._shard, self.batch_dims, len(flat) - len(inputs), flat,
                descriptors)
            keep.extend(held)
            return parameters

        with self.lock, torch.no_grad(), self._collectives:
            library = self._load()
            if self.hyper is None:
                self.hyper = self._new_hyper()
            return call_step(library, self.spec, self.model, inputs,
                             self.hyper, self.in_place, arguments=arguments)

    def collectives_per_call(self):
        """(collectives, bytes) of the last call."""
        return self._collectives.count, self._collectives.bytes


class LoadedShardedStep(LoadedDataParallelStep):
    """A saved shard="parameters" step of one rank, bound to that rank of a
    process group of the saved size: the model's sharded parameters hold
    the rank's rows from here on, as in the compiled step."""

    def __init__(self, directory, model, optimizer, signature, group):
        sharded = signature["data_parallel"]["sharded"]
        dist = _dist()
        world, rank = dist.get_world_size(group), dist.get_rank(group)
        if (world, rank) != (sharded["world_size"], sharded["rank"]):
            raise CompileError(
                f"load_step: this shard='parameters' step was saved by rank "
                f"{sharded['rank']} of a group of {sharded['world_size']} "
                "(its library holds that rank's rows of every parameter); "
                f"this is rank {rank} of {world}: load each rank's saved "
                "step on the same rank of a group of the same size",
                code="step-signature-mismatch")
        _cut_to_rows(model, sharded["parameters"], world, rank)
        super().__init__(directory, model, optimizer, signature, group)
        # The ranks' libraries differ (each holds its rows): they agree on
        # the sharding and the rest of the contract.
        self.data_parallel = {k: v for k, v in self.data_parallel.items()
                              if k != "sharded"}
        self._digest = {"shard": sharded["shard"], "world_size": world}


def _cut_to_rows(model, full_shapes, world, rank):
    """Each parameter named in `full_shapes` (its whole shape) cut to rows
    [begin, end) of rank `rank` of `world` (_dp_collectives.shard_rows); a
    parameter of another shape is a CompileError."""
    named = dict(model.named_parameters())
    for name, shape in full_shapes.items():
        p = named.get(name)
        if p is None:
            raise CompileError(f"load_step: the model has no parameter "
                               f"'{name}' (the step was compiled with it)",
                               code="step-signature-mismatch")
        if list(p.shape) != list(shape):
            raise CompileError(
                f"load_step: parameter '{name}' is {list(p.shape)}; the "
                f"sharded step was compiled for the whole {list(shape)} "
                "(load_step takes the model with its whole parameters and "
                "keeps this rank's rows)",
                code="step-signature-mismatch")
    for name, shape in full_shapes.items():
        p = named[name]
        begin, end = shard_rows(shape[0], world, rank)
        p.data = p.data.narrow(0, begin, end - begin).clone()
