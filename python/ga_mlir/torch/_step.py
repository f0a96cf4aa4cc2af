"""Compiling the imported step with ga-mlir and calling it on tensors."""

import hashlib
import os
import tempfile
import threading

import torch

from .. import aot, library_path
from ._budget import (_budget_text, _cache_dir, _choose_micro_batches,
                      _memory_report, _returned_bytes)
from ._cache import cached_export, library_cpu
from ._call import CpuLibrary, CudaLibrary, call_step, new_hyper, \
    require_cuda
from ._common import CompileError
from ._dp_memory import argument_roles, budget_bytes
from ._export import _Spec, export_train_step
from ._guards import all_hold
from ._fastcall import CallPlan, traced_state as _traced_state
from ._layout import StepLayout
from ._saved import save_step
from ._options import (_ACCUMULATE_OPTIONS, _LOWER_OPTIONS, _NVVM_OPTIONS,
                       compile_step, step_options)


def _aot(what, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except aot.CompileError as error:
        raise CompileError(f"{what}: {error}",
                           error.code, error.diagnostics) from None


def _compile_library(ir, compile_options, mcpu, in_place):
    """The shared library of `ir` under `compile_options` (the driver's:
    _options.step_options), built by the driver and ga-compile's linking
    (ga_mlir.aot) into the cache, from the cache when the same IR was
    compiled with the same options before, and whether its results
    `in_place` (pairs of result and argument indices) are written into the
    arguments (else the library returns every result: into out-parameters
    on the CPU, in device memory on the GPU)."""
    target = compile_options.target
    key = hashlib.sha256("\0".join(
        [ir, repr(compile_options), library_cpu(mcpu), repr(in_place),
         os.path.realpath(library_path()),
         str(os.path.getmtime(library_path()))]).encode()).hexdigest()[:24]
    directory = os.path.join(_cache_dir(), key)
    lib = os.path.join(directory, "libstep.so")
    if os.path.exists(lib):
        return lib, os.path.exists(os.path.join(directory, "in-place"))
    lowered, written_in_place = compile_step(ir, compile_options, in_place)
    work = tempfile.mkdtemp(prefix="step-", dir=_cache_dir())
    with open(os.path.join(work, "step.mlir"), "w") as f:
        f.write(ir)
    with open(os.path.join(work, "step.lowered.mlir"), "w") as f:
        f.write(lowered)
    if written_in_place:
        with open(os.path.join(work, "in-place"), "w") as f:
            f.write(repr(in_place))
    _aot("ga-compile failed", aot.link_library, lowered,
         os.path.join(work, "libstep.so"), target,
         mcpu=mcpu if target == "cpu" else None)
    try:
        os.rename(work, directory)
    except OSError:  # another process compiled it first
        return os.path.join(work, "libstep.so"), written_in_place
    return lib, written_in_place


def _argument_types(spec, model):
    """(what, shape, dtype) of the step's parameters, frozen parameters,
    buffers and optimizer states, as the library was compiled for them (see
    check_argument_types)."""
    buffers = dict(model.named_buffers())
    types = [(f"parameter '{n}'", tuple(p.shape), p.dtype)
             for n, p in zip(spec.train_names + spec.frozen_names,
                             spec.params + spec.frozen)]
    types += [(f"buffer '{n}'", tuple(buffers[n].shape), buffers[n].dtype)
              for n in spec.buffer_names]
    for i, n in enumerate(spec.train_names):
        types += [(f"the optimizer's state '{s}' of '{n}'",
                   *spec.opt.state_type(i, s))
                  for s in spec.opt.state_names(i)]
    return types


class _Guarded:
    """The key of a variant traced for the outcomes of its guards."""

    def __init__(self, key, guards):
        self.key = key
        self.outcomes = tuple(g.outcome for g in guards)

    def __eq__(self, other):
        return isinstance(other, _Guarded) and \
            (self.key, self.outcomes) == (other.key, other.outcomes)

    def __hash__(self):
        return hash((self.key, self.outcomes))


class CompiledTrainStep:
    """The compiled step: call it with the inputs of one whole batch."""

    def __init__(self, model, loss_fn, optimizer, example_inputs,
                 micro_batches=None, micro_batch_size=None,
                 max_memory=None, max_grad_norm=None, target="cpu",
                 batch_dims=None, indexing=None, mcpu="native",
                 in_place=True, **options):
        if target not in ("cpu", "cuda"):
            raise CompileError(f"target={target!r}: 'cpu' or 'cuda'",
                               code="invalid-argument")
        if micro_batches is None and micro_batch_size is None and \
                max_memory is None:
            raise TypeError("pass one of micro_batches=, micro_batch_size= "
                            "and max_memory=")
        if max_memory is not None:
            _budget_text(max_memory)
            # Under a budget the copies of the recomputed values take the
            # storage of values dead by then (--ga-share-buffers): without
            # it recomputation adds buffers instead of lowering the peak.
            if target == "cpu":
                options.setdefault("share_buffers", True)
        lowering = _NVVM_OPTIONS if target == "cuda" else _LOWER_OPTIONS
        for key in options:
            if key not in _ACCUMULATE_OPTIONS and key not in lowering:
                raise TypeError(f"compile_train_step: unknown option {key!r}"
                                f" for target={target!r}")
        self.target = target
        if target == "cuda" and not in_place:
            raise TypeError("in_place=False: a target='cuda' step always "
                            "copies its results into place")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.micro_batches, self.micro_batch_size = micro_batches, \
            micro_batch_size
        self.max_memory = max_memory
        self.choice = None
        self.in_place = in_place
        self.max_grad_norm = max_grad_norm
        # Class indices and embedding rows: gathered on the GPU (a one-hot
        # product over a 50257-row vocabulary is a GEMM per lookup), compared
        # with an iota on the CPU. Both are exact.
        if indexing is None:
            indexing = "gather" if target == "cuda" else "one-hot"
        self.indexing, self.mcpu, self.options = indexing, mcpu, options
        self.num_inputs = len(example_inputs)
        self.batch_dims = list(batch_dims) if batch_dims is not None else \
            [0] * self.num_inputs
        if len(self.batch_dims) != self.num_inputs:
            raise TypeError("batch_dims needs one dimension per input")
        self._variants = {}
        self._plan = None  # the fast path of the last call (_fastcall)
        self._variant(tuple(example_inputs))

    def _key(self, inputs):
        # What the trace baked in besides the shapes: a step traced in
        # training mode (or before momentum was switched on) must not be
        # reused once the model or the optimizer changed.
        return (tuple((tuple(t.shape), t.dtype) for t in inputs),
                _traced_state(self.model, self.optimizer))

    def _variant(self, inputs):
        key = self._key(inputs)
        if key in self._variants:
            return self._variants[key]
        # Variants traced for the outcomes of branches on sizes of
        # selections (_guards): the one whose guards hold for this batch.
        for k, v in self._variants.items():
            if isinstance(k, _Guarded) and k.key == key and \
                    all_hold(v.spec.guards, inputs):
                return v
        for t in inputs:
            if not isinstance(t, torch.Tensor):
                raise CompileError("inputs must be tensors",
                                   code="invalid-argument")
            if t.device.type != "cpu" and self.target == "cpu":
                raise CompileError("inputs must be CPU tensors "
                                   "(target='cpu')",
                                   code="tensor-placement")
        if self.target == "cuda":
            # Tracing needs shapes and dtypes only, and runs on the CPU.
            if any(p.device.type != "cpu" for p in self.model.parameters()):
                raise CompileError(
                    "target='cuda': the step is traced on the CPU for these "
                    "input shapes, but the model's parameters are on the "
                    "GPU: compile (or call once per input shape) with the "
                    "model on the CPU, then move it with model.cuda(), "
                    "which keeps the parameters' identity",
                    code="tensor-placement")
            inputs = tuple(t.cpu() for t in inputs)
        batch = {t.shape[d] for t, d in zip(inputs, self.batch_dims)}
        if len(batch) != 1:
            raise CompileError(f"inputs disagree on the batch size: {batch}",
                               code="inputs-batch-disagree")
        batch = batch.pop()
        ir, spec = self._export(inputs, None)
        batch_args = spec.batch_args()  # the inputs (and samples' indices)
        # What a budget is measured on: the library's in-place form.
        self._budget_spec = spec
        n = self._micro_batch_count(ir, batch_args, batch)
        if not 1 <= n <= batch:
            raise CompileError(f"{n} micro-batches for a batch of {batch}: "
                               "every micro-batch needs at least one "
                               "sample; pass at most the batch size",
                               code="too-few-samples")
        compiled_ir, compile_options = self._step_options(ir, n, batch_args,
                                                          spec)
        buffers = dict(self.model.named_buffers())
        results = [(p.shape, p.dtype) for p in spec.params]
        for i in range(len(spec.params)):
            results += [spec.opt.state_type(i, s)
                        for s in spec.opt.state_names(i)]
        results += [(buffers[n].shape, buffers[n].dtype)
                    for n in spec.mutated_buffers]
        results.append(((), torch.float32))
        results += spec.metrics.results()
        in_place = self._in_place_pairs(spec)
        lib, written_in_place = _compile_library(
            compiled_ir, compile_options, self.mcpu, in_place)
        kept = 1 + len(spec.metrics)  # the loss and the metrics
        variant = _Variant(lib, results[-kept:] if written_in_place
                           else results, self.target)
        variant.spec, variant.micro_batches = spec, n
        variant.ir, variant.batch_args = ir, batch_args
        variant.in_place = in_place if written_in_place else []
        variant.layout = StepLayout.from_spec(
            spec, self.model, inputs, self.batch_dims, n, self.target,
            variant.in_place, results)
        variant.expected = _argument_types(spec, self.model)
        if self.max_memory is not None:
            self._check_budget(variant)
        self._variants[_Guarded(key, spec.guards) if spec.guards
                       else key] = variant
        return variant

    def _check_budget(self, variant):
        """Refuses a library built under max_memory whose report
        (memory_report()'s total_peak) is over the budget. The planner
        measures each candidate as the library is built, so this holds by
        construction; it is checked because a planner that measured another
        step than the one built would let the step exceed its budget with
        no word (GPT-J's gathers, which one more run of
        --ga-fold-iota-operands shrank by 256 bytes; a library that could
        not write its results in place, while the planner measured the
        in-place form). Data-parallel steps check their own budgets."""
        if type(self).memory_report is not CompiledTrainStep.memory_report:
            return
        budget = budget_bytes(self.max_memory)
        total = self._report(variant)["total_peak"]
        if total <= budget:
            return
        predicted = (self.choice or {}).get("predicted_peak")
        raise CompileError(
            f"the step compiled under max_memory={self.max_memory!r} "
            f"({budget} bytes) holds {total} bytes "
            f"(memory_report()['total_peak']), over the budget, although "
            f"the planner predicted {predicted} bytes for N = "
            f"{variant.micro_batches}: an internal error of ga-mlir; "
            "raise max_memory, or pass micro_batches= and recompute= "
            "yourself", code="budget-not-met")

    def _in_place_pairs(self, spec):
        """The (result, argument) pairs the library writes in place (none
        with in_place=False): new parameters into the parameters, new
        states into the states, updated buffers into the buffers."""
        if not self.in_place:
            return []
        num_params, num_states = len(spec.params), sum(spec.num_states)
        first_buffer = num_params + len(spec.frozen)
        first_state = first_buffer + len(spec.buffer_names)
        return [(i, i) for i in range(num_params)] + [
            (num_params + k, first_state + k) for k in range(num_states)] + [
            (num_params + num_states + k,
             first_buffer + spec.buffer_names.index(n))
            for k, n in enumerate(spec.mutated_buffers)]

    def _export(self, inputs, outcomes):
        """The traced step for `inputs` (cached_export), traced again
        while the guards of a cached trace answer otherwise for them."""
        for _ in range(8):
            ir, spec = cached_export(
                export_train_step, _Spec, self.model, self.loss_fn,
                self.optimizer, inputs, self.max_grad_norm,
                self.indexing, bool(self.options.get(
                    "recompute_statistics")), tuple(self.batch_dims),
                outcomes)
            if not spec.guards or all_hold(spec.guards, inputs):
                break
            outcomes = (outcomes or ()) + (tuple(
                g.answer(inputs) for g in spec.guards),)
        if spec.guards and not self._guards_allowed:
            raise CompileError(
                f"{spec.guards[0].where}: error: this line branches on the "
                "size of a selection by a boolean mask, which a "
                "data-parallel step does not support (each rank sees its "
                "own samples)",
                code="data-dependent-size")
        return ir, spec

    # Whether branches on sizes of selections are supported (_guards).
    _guards_allowed = True

    def _micro_batch_count(self, ir, batch_args, batch):
        """N for a batch of `batch` samples (a hook of _distributed); under
        a budget, the recompute set is chosen with it (`self.choice`)."""
        given = [self.micro_batches, self.micro_batch_size, self.max_memory]
        if sum(v is not None for v in given) == 1 and \
                self.max_memory is None:
            return self.micro_batches or -(-batch // self.micro_batch_size)
        # A budget (with micro_batches: N fixed, the set chosen), or
        # several options (contradictory: the pass says so, located).
        # Measured as memory_report() measures the library: in place, with
        # the same argument classes.
        spec = self._budget_spec
        self.choice = _choose_micro_batches(
            ir, batch_args, *given, self.options,
            self._in_place_pairs(spec), argument_roles(spec, self.num_inputs),
            self.target, self._returned(spec))
        return self.choice["micro_batches"]

    def _returned(self, spec):
        """The heap bytes a call allocates to return the results of the
        step of `spec` (_returned_bytes): a category of memory_report()'s
        total_peak, kept out of max_memory. For the CPU step of this class's
        report only (the GPU returns device tensors; the data-parallel
        report is its own)."""
        own_report = CompiledTrainStep.memory_report
        if self.target != "cpu" or type(self).memory_report is not own_report:
            return 0
        return _returned_bytes([((), torch.float32)] + spec.metrics.results(),
                               bool(spec.layouts))

    def _rewrite_options(self):
        """The options with the recompute set chosen under a budget."""
        chosen = (self.choice or {}).get("recompute")
        return dict(self.options, recompute=chosen) if chosen else \
            self.options

    def _step_options(self, ir, n, batch_args, spec):
        """The IR to compile and the driver's options for it
        (_options.step_options; a hook of _distributed, which may set
        `spec.opt.shard_rows`)."""
        return ir, step_options(n, batch_args, self._rewrite_options(),
                                self.target)

    def _call_arguments(self, variant, flat, descriptors):
        """The parameters of the library's function before its
        out-parameters, as ctypes objects (see CpuLibrary.run; a hook of
        _distributed)."""
        return descriptors

    def chosen_micro_batches(self, *inputs):
        """N of the step for `inputs` (default: the example inputs' shapes),
        as given, or as chosen from micro_batch_size or max_memory."""
        if not inputs:
            return next(iter(self._variants.values())).micro_batches
        return self._variant(tuple(t.contiguous() for t in
                                   inputs)).micro_batches

    def chosen_configuration(self):
        """What max_memory= chose (None without a budget): a dict of
        micro_batches, recompute (the set of --ga-rematerialize),
        predicted_peak (the total peak, bytes) and recompute_work (the
        arithmetic work the recomputation adds, operations per step)."""
        return self.choice

    def memory_report(self, *inputs):
        """The static memory report (--ga-memory-report, as a dict: bytes of
        parameters, optimizer_state, inputs, accumulators, results,
        temporaries, static, total_peak, ...) of the step for `inputs`
        (default: the example inputs' shapes), bufferized as the library
        is: for target="cuda" the GPU step's device bytes (bf16 buffers
        where autocast stores bf16), with `workspaces` (the cuBLASLt
        workspace, in total_peak) and `host` (host buffers, apart).
        `user_checkpoints`, where the model calls
        torch.utils.checkpoint: how many calls the step read as plain calls
        (its own recompute set, not the user's marks, is what this
        report counts: _checkpoint)."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        return dict(self._report(v))

    def _report(self, v):
        """memory_report() of variant `v`, computed once (a bufferization
        of the step)."""
        if getattr(v, "report", None) is not None:
            return v.report
        report = _memory_report(v.ir, v.micro_batches, v.batch_args,
                                self._rewrite_options(), v.in_place,
                                argument_roles(v.spec, self.num_inputs),
                                self.target)
        # What the call allocates to return the results (PyTorch's tensors
        # beside the library's buffers), when it is measured.
        returned = self._returned(v.spec)
        if returned:
            report["returned"] = returned
            report["total_peak"] += returned
        if getattr(v.spec, "user_checkpoints", 0):
            report["user_checkpoints"] = v.spec.user_checkpoints
        v.report = report
        return report

    def writes_in_place(self, *inputs):
        """Whether the library for `inputs` (default: the example inputs'
        shapes) writes the new parameters and optimizer states into their
        tensors' storage (no copy); False when in_place=False was asked or
        an update could not be bufferized in place."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        return bool(v.in_place)

    # Whether calls may take the fast path of _fastcall (the data-parallel
    # step lays out its arguments differently).
    _fast_calls = True

    def __call__(self, *inputs):
        if len(inputs) != self.num_inputs:
            raise TypeError(f"expected {self.num_inputs} inputs, got "
                            f"{len(inputs)}")
        inputs = tuple(t.contiguous() for t in inputs)
        plan = self._plan
        if plan is not None and plan.holds(self, inputs):
            with plan.variant.lock:
                return plan.call(inputs)
        # The slow path: everything looked up again, then a new plan.
        self._plan = None
        v = self._variant(inputs)
        with v.lock, torch.no_grad():
            library = v.library()
            if v.hyper is None:
                v.hyper = new_hyper(v.spec, "cuda" if v.target == "cuda"
                                    else "cpu")
            loss = call_step(
                library, v.spec, self.model, inputs, v.hyper, v.in_place,
                arguments=lambda flat, descriptors: self._call_arguments(
                    v, flat, descriptors), expected=v.expected)
            if self._fast_calls and not v.spec.guards:
                self._plan = CallPlan.build(self, v, inputs)
        return loss

    def save(self, directory, *inputs):
        """Writes the compiled step for `inputs` (default: the example
        inputs' shapes) into `directory`: the library, the runtime libraries
        beside it and `step.json`, its signature (parameter names, shapes
        and dtypes, the optimizer's kind and settings, the inputs, the
        layout of arguments and results). `ga_mlir.torch.load_step(directory,
        model, optimizer)` runs it with torch and ctypes only."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        self._save(directory, v)

    def _save(self, directory, v, data_parallel=None):
        if v.spec.guards:
            raise CompileError(
                f"{v.spec.guards[0].where}: error: step.save: this step "
                "branches on the size of a selection by a boolean mask, and "
                "a saved step holds one outcome of the branch only",
                code="save-not-supported")
        if v.spec.layouts:
            raise CompileError(
                "step.save: this step draws random numbers (dropout); saving "
                "such a step is not supported yet (its seed and samples' "
                "indices are not part of the saved signature)",
                code="save-not-supported")
        save_step(directory, v.path, v.layout, data_parallel)


class _Variant:
    """One compiled library, for one set of input shapes; loaded at its
    first call (a CUDA library needs a GPU to load)."""

    def __init__(self, path, results, target):
        self.path, self.results, self.target = path, results, target
        self.lock = threading.Lock()
        self.hyper = None  # the 0-d hyper-parameter arguments, reused
        self._library = None

    def library(self):
        if self._library is None:
            if self.target == "cuda":
                require_cuda()
                self._library = CudaLibrary(self.path, self.results)
            else:
                self._library = CpuLibrary(self.path, self.results)
        return self._library
