"""Sharded parameters (FSDP / ZeRO-3) inside a torch.distributed process group.

`compile_train_step(..., shard="parameters")` in a process group of W ranks:
rank r holds rows [r D / W, (r + 1) D / W) of dimension 0 (D rows) of every
trained parameter of dimension >= 1, of its gradient accumulator and of its
optimizer state (uneven when W does not divide D; a rank may hold none).
Between steps `model.parameters()` hold the rank's rows: each parameter's
`.data` is a plain contiguous tensor of those rows (FSDP2's local tensor of a
`Shard(0)` DTensor, without the DTensor wrapper); the optimizer state holds
the same rows (ZeRO-1's). 0-d parameters and frozen ones stay whole.
`step.full_state_dict()` gathers the whole parameters on every rank.

How (docs/Distributed.md): the step is ZeRO-1's (--ga-shard-optimizer: the
update of the rank's rows, the state's rows), then --ga-shard-parameters
makes the parameter arguments and results the rank's rows, all-gathers each
parameter inside the micro-batch loop before its first reader in the forward
and again before its first reader in the backward (the forward: the ops the
loss depends on), and reduce-scatters each micro-batch's gradient into a
shard accumulator (the default plan: everything resharded after use, FSDP's
default, the lowest memory). The optimizer runs on the rank's rows once per
step, after the loop. The collectives go through the host runtime to
torch.distributed as ZeRO-1's do (_dp_collectives), which counts the calls
and bytes per step (`step.collectives_per_call()`, `step.bytes_per_call()`);
`step.shard_plan()` is the plan as compiled, with its predicted bytes.

Under `max_memory` (a per-rank budget) the plan is chosen (_shard_plan,
--ga-shard-plan): the parameters in buckets of `bucket_cap_mb`, per bucket
kept gathered across the loop or re-gathered per micro-batch, reduced per
micro-batch or once after the loop, jointly with N, the fewest bytes moved
whose predicted per-rank peak fits; `step.shard_plan()` then also reports
the buckets, the budget and the predicted per-rank peak. Without it every
bucket is resharded after use (FSDP's default, the lowest memory).
`step.sharded_state_dict()` is the state as torch.distributed.checkpoint
saves and loads it (sharded: each rank writes and reads its rows).
"""

import copy
import dataclasses
import json
import os
import tempfile

import torch

from .. import driver
from . import _shard_plan
from ._common import CompileError
from ._dp_collectives import shard_rows
from ._dp_memory import Probe
from ._distributed import DataParallelTrainStep, data_parallel_signature
from ._layout import _dtype_name
from ._options import run_driver


def _dist():
    import torch.distributed as dist
    return dist


def gather_rows(rows, full_rows, group):
    """The whole tensor of `full_rows` rows whose rank-r rows (ga's split)
    each rank holds as `rows`, on every rank of `group` (gloo gathers equal
    parts only: the parts travel padded to the largest)."""
    dist = _dist()
    world = dist.get_world_size(group)
    bounds = [shard_rows(full_rows, world, r) for r in range(world)]
    longest = max(e - b for b, e in bounds)
    padded = rows.new_zeros((longest,) + tuple(rows.shape[1:]))
    padded[:rows.shape[0]] = rows
    parts = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(parts, padded.contiguous(), group=group)
    return torch.cat([p[:e - b] for p, (b, e) in zip(parts, bounds)])


class ShardedParametersTrainStep(DataParallelTrainStep):
    """The compiled step of one rank with sharded parameters (see the module
    docstring)."""

    def __init__(self, model, loss_fn, optimizer, example_inputs,
                 process_group, bucket_cap_mb=25, **kwargs):
        # Resharding is for the lowest peak: a layer's gathered parameters
        # and whole-size gradient take the storage of the previous layer's
        # only with --ga-share-buffers (docs/Distributed.md).
        if kwargs.get("target", "cpu") == "cpu":
            kwargs.setdefault("share_buffers", True)
        self._full_shapes = {}  # sharded parameter -> its whole shape
        self._plans = {}        # variant key -> the plan as compiled
        self._choice = None     # --ga-shard-plan's (None: the default)
        super().__init__(model, loss_fn, optimizer, example_inputs,
                         process_group, bucket_cap_mb, shard_optimizer=True,
                         **kwargs)

    # -- the parameters' shards ----------------------------------------------

    def _shardable(self, spec):
        return [p for p in spec.params if p.dim() >= 1]

    def _shard_parameters(self, spec):
        """Cuts every trained parameter of dimension >= 1 down to this
        rank's rows (once; the parameter objects stay the same)."""
        for p in self._shardable(spec):
            if p in self._full_shapes:
                continue
            begin, end = shard_rows(p.shape[0], self.world_size, self.rank)
            self._full_shapes[p] = tuple(p.shape)
            p.data = p.data.narrow(0, begin, end - begin).clone()

    def _gathered(self, p):
        if p not in self._full_shapes:
            return p.detach().clone()
        return gather_rows(p.detach(), self._full_shapes[p][0],
                           self.process_group)

    def full_state_dict(self):
        """The model's state dict with the whole parameters (gathered: every
        rank must call it) and buffers, on every rank."""
        state = {n: self._gathered(p)
                 for n, p in self.model.named_parameters()}
        state.update({n: b.detach().clone()
                      for n, b in self.model.named_buffers()})
        return state

    # -- the sharded checkpoint ---------------------------------------------

    def _rows_tensor(self, local, full_shape):
        """`local` (this rank's rows of a tensor of `full_shape`) as a
        ShardedTensor torch.distributed.checkpoint saves and loads: its
        local shard is `local` itself (loading writes into it), at ga's
        row offset (uneven: not a DTensor's chunks); a rank without rows
        has no shard."""
        from torch.distributed._shard.metadata import ShardMetadata
        from torch.distributed._shard.sharded_tensor import (
            Shard, init_from_local_shards)
        begin, end = shard_rows(full_shape[0], self.world_size, self.rank)
        shards = [] if end == begin else [Shard(local, ShardMetadata(
            shard_offsets=[begin] + [0] * (len(full_shape) - 1),
            shard_sizes=list(local.shape),
            placement=f"rank:{self.rank}/{local.device}"))]
        return init_from_local_shards(shards, *full_shape,
                                      process_group=self.process_group)

    def sharded_state_dict(self):
        """The step's state as this rank holds it, a dict that
        torch.distributed.checkpoint saves and loads (dcp.save(sd, ...) on
        every rank; dcp.load(step.sharded_state_dict(), ...) on a new step
        of the same model, then the next step continues bit for bit):
        "model.<name>" for the parameters and buffers, "optim.<name>.<state>"
        for the optimizer's state. The sharded parameters and their states
        of the same shape are ShardedTensors of this rank's rows whose local
        shards are the step's own tensors, so loading writes into them; the
        rest (0-d parameters, step counts, buffers) are plain tensors, the
        same on every rank. The optimizer's state is created as its first
        step would create it when it does not exist yet, so that a new step
        loads before its first call."""
        from ._optimizers import _initial_states
        params = [p for group in self.optimizer.param_groups
                  for p in group["params"]]
        missing = [p for p in params if not self.optimizer.state.get(p)]
        if missing:
            _initial_states(self.optimizer, missing)
        state = {}
        for name, p in self.model.named_parameters():
            full = self._full_shapes.get(p)
            state[f"model.{name}"] = self._rows_tensor(p.data, full) \
                if full else p.data
            for key, value in self.optimizer.state.get(p, {}).items():
                if not torch.is_tensor(value):
                    continue
                sharded = full and tuple(value.shape) == tuple(p.shape)
                state[f"optim.{name}.{key}"] = \
                    self._rows_tensor(value, full) if sharded else value
        for name, b in self.model.named_buffers():
            state[f"model.{name}"] = b.data
        return state

    class _Whole:
        """The whole parameters in the model while a variant is traced and
        compiled (every rank traces together: the ranks change their input
        shapes together)."""

        def __init__(self, step):
            self.step = step
            self.shards = {}

        def __enter__(self):
            for p in self.step._full_shapes:
                self.shards[p] = p.data
                p.data = self.step._gathered(p)

        def __exit__(self, *exc):
            for p, shard in self.shards.items():
                p.data = shard

    # -- hooks ------------------------------------------------------------------

    def _signature(self, inputs):
        signature = super()._signature(inputs)
        signature["parameters"] = [
            [n, list(self._full_shapes.get(p, p.shape)), str(p.dtype),
             p.requires_grad] for n, p in self.model.named_parameters()]
        signature["shard"] = "parameters"
        return signature

    def _variant(self, inputs):
        self._exchange(inputs)
        key = self._key(inputs)
        if key in self._variants:
            return self._variants[key]
        with self._Whole(self):
            v = super()._variant(inputs)
        v.choice = self._choice
        spec = v.spec
        self._shard_parameters(spec)
        # The library takes and returns the parameters' rows.
        for i, p in enumerate(spec.params):
            if p in self._full_shapes:
                what, _, dtype = v.expected[i]
                v.expected[i] = (what, tuple(p.shape), dtype)
                if not v.in_place:
                    v.results[i] = (p.shape, p.dtype)
        return v

    def _shard_parameters_options(self, spec):
        """--ga-shard-parameters for this rank (a driver.ShardParameters):
        the sharded parameters are argument i and result i (the step's
        layout starts with them); the loss follows the parameters, the
        states and the mutated buffers."""
        indices = [i for i, p in enumerate(spec.params) if p.dim() >= 1]
        loss = len(spec.params) + sum(spec.num_states) + \
            len(spec.mutated_buffers)
        if getattr(self, "_plan_dir", None) is None:
            # Removed with the step.
            self._plan_dir = tempfile.TemporaryDirectory(prefix="ga-fsdp-")
        self._plan_file = os.path.join(self._plan_dir.name, "plan.json")
        chosen = self._choice or {}
        return driver.ShardParameters(
            self.rank, self.world_size, loss, tuple(indices), tuple(indices),
            self._plan_file, tuple(chosen.get("keep_gathered", ())),
            tuple(chosen.get("reduce_after_loop", ())))

    def _export(self, inputs, outcomes):
        ir, spec = super()._export(inputs, outcomes)
        self._traced = spec  # for the plan under a budget
        return ir, spec

    def _micro_batch_count(self, ir, batch_args, batch):
        """N, and under `max_memory` the plan with it (_shard_plan: the
        same on every rank)."""
        self._choice = None
        if self.max_memory is None:
            return super()._micro_batch_count(ir, batch_args, batch)
        if self.micro_batch_size is not None:
            raise CompileError(
                "compile_train_step: shard='parameters' with max_memory "
                "chooses N itself: give micro_batches (N fixed) or "
                "neither, not micro_batch_size",
                code="options-contradict")
        dist = _dist()
        begin, end, _ = self._shard
        smallest = torch.tensor([end - begin], dtype=torch.int64)
        dist.all_reduce(smallest, op=dist.ReduceOp.MIN,
                        group=self.process_group)
        counts = _shard_plan.candidate_counts(int(smallest),
                                              self.micro_batches)
        spec = self._traced
        probe = Probe(spec, batch_args, self._shard,
                       self._in_place_pairs(spec))
        try:
            peaks, resident = _shard_plan.base_peaks(
                self, ir, batch_args, spec, counts, probe)
        except CompileError:
            if not probe.in_place:
                raise
            probe.in_place = []
            peaks, resident = _shard_plan.base_peaks(
                self, ir, batch_args, spec, counts, probe)
        self._choice = _shard_plan.fit(
            self, ir, batch_args, spec, counts, peaks, resident,
            self.max_memory, probe)
        return self._choice["micro_batches"]

    def _step_options(self, ir, n, batch_args, spec):
        # The sharded collectives are lowered one by one (no bucketing of
        # reduce-scatters and all-gathers yet).
        ir, options = super()._step_options(ir, n, batch_args, spec)
        options.shard_parameters = self._shard_parameters_options(spec)
        return ir, options

    # -- the plan -----------------------------------------------------------------

    def shard_plan(self, *inputs):
        """The plan of the step for `inputs` (default: the example inputs)
        as compiled: per sharded parameter (its name) the all-gathers per
        micro-batch and outside the loops, the reduce-scatters of its
        gradient likewise, and the bytes per step of the whole tensors they
        move (`bytes`), with `sent`, the bytes this rank sends (the other
        ranks' rows of each reduce-scatter, its own rows to each other rank
        for each all-gather); and the totals."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        if getattr(v, "shard_plan", None) is None:
            v.shard_plan = self._read_plan(v)
        return v.shard_plan

    def _read_plan(self, v):
        # The plan file of this variant's rewrite (the library may have come
        # from the cache, and other rewrites write the file too).
        chosen, self._choice = self._choice, getattr(v, "choice", None)
        try:
            marked, options = self._step_options(
                v.ir, v.micro_batches, v.batch_args, v.spec)
            run_driver(marked, dataclasses.replace(options, target=None),
                       "ga-mlir refused the training step")
        finally:
            self._choice = chosen
        path = getattr(self, "_plan_file", None)
        if path is None or not os.path.exists(path):
            raise CompileError("internal error: no plan written by "
                               "--ga-shard-parameters",
                               code="internal-error")
        with open(path) as f:
            rows = json.load(f)
        names = {p: n for n, p in self.model.named_parameters()}
        n = v.micro_batches
        world, rank = self.world_size, self.rank
        plan = {"micro_batches": n, "parameters": {}, "bytes": 0, "sent": 0}
        for row in rows:
            p = v.spec.params[row["result"]]
            full = self._full_shapes[p]
            begin, end = shard_rows(full[0], world, rank)
            mine = (end - begin) / full[0]
            gathers = n * row["gathers_per_micro_batch"] + \
                row["gathers_outside_loops"]
            scatters = n * row["scatters_per_micro_batch"] + \
                row["scatters_outside_loops"]
            moved = gathers * row["gathered_bytes"] + \
                scatters * row["scattered_bytes"]
            sent = round(gathers * row["gathered_bytes"] * mine *
                         (world - 1) + scatters * row["scattered_bytes"] *
                         (1 - mine))
            plan["parameters"][names[p]] = {
                "gathered": "per micro-batch" if
                row["gathers_per_micro_batch"] else "once",
                "reduced": "per micro-batch" if
                row["scatters_per_micro_batch"] else "after the loop",
                "all_gathers": gathers, "reduce_scatters": scatters,
                "bytes": moved, "sent": sent}
            plan["bytes"] += moved
            plan["sent"] += sent
        if getattr(v, "choice", None):
            self._add_choice(plan, v)
        return plan

    def _add_choice(self, plan, v):
        """The budget's choice (--ga-shard-plan) in the plan: the
        per-rank peak predicted (the chosen plan's as compiled, the largest
        over the ranks: _shard_plan.fit), the planner's model of it, that of
        the default plan, the budget, and per bucket its parameters'
        names, choices, collectives and bytes as predicted."""
        choice = v.choice
        index = {p: i for i, p in enumerate(v.spec.params)}
        by_result = {index[p]: n for n, p in self.model.named_parameters()
                     if p in index}
        plan.update({
            "budget": choice["budget"],
            "predicted_peak": choice["predicted_peak"],
            "modelled_peak": choice.get("modelled_peak",
                                        choice["predicted_peak"]),
            "base_peak": choice["base_peak"],
            "predicted_bytes": choice["moved"],
            "predicted_calls": choice["calls"],
            "candidates": choice["candidates"],
            "measured_plans": choice.get("measured_plans"),
            "proven_least": choice.get("proven_least"),
            "least_bytes": choice.get("least_bytes"),
            "next_cheaper": choice.get("next_cheaper"),
            "buckets": [{
                "parameters": [by_result[r] for r in b["results"]],
                "bytes": b["bytes"], "gathered": b["gathered"],
                "reduced": b["reduced"], "all_gathers": b["all_gathers"],
                "reduce_scatters": b["reduce_scatters"],
                "moved": b["moved"], "resident": b["resident"]}
                for b in choice["buckets"]]})

    def save(self, directory, *inputs):
        """Writes this rank's compiled step for `inputs` (default: the
        example inputs): its library holds this rank's rows of every
        sharded parameter, so every rank saves its own (a directory per
        rank), marked with the rank, the world size and the whole shapes of
        the sharded parameters; `load_step` on the same rank of a group of
        the same size cuts the model's parameters to the rows and binds the
        step to the group (see _dp_saved)."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        # The layout was taken while the parameters were whole (traced
        # whole): the library takes and returns their rows.
        layout = copy.deepcopy(v.layout)
        rows = {n: list(p.shape) for n, p in self.model.named_parameters()
                if p in self._full_shapes}
        layout.params = [[n, rows.get(n, shape), dtype]
                         for n, shape, dtype in layout.params]
        if not v.in_place:
            layout.results = [[list(shape), _dtype_name(dtype)]
                              for shape, dtype in v.results]
        data_parallel = data_parallel_signature(v, self.batch_dims,
                                                self.bucket_cap_mb)
        data_parallel["sharded"] = {
            "shard": "parameters", "rank": self.rank,
            "world_size": self.world_size,
            "parameters": {n: list(self._full_shapes[p])
                           for n, p in self.model.named_parameters()
                           if p in self._full_shapes}}
        saved = copy.copy(v)
        saved.layout = layout
        self._save(directory, saved, data_parallel=data_parallel)
