"""The fast path of a compiled step's call: what one call needs, laid out
once and reused while cheap guards show that nothing it was built from
changed.

A call of the step (_step.CompiledTrainStep) depends on: what the trace
baked in (`traced_state`: the modules, their plain settings and training
flags, which parameters there are and which require gradients, the
optimizer's groups and the settings its traced step bakes in), the input
shapes, and the
tensors that become the library's arguments (parameters, frozen parameters,
buffers, optimizer states: their storage, shape, dtype). The slow path
recomputes all of that at every call (a few milliseconds of Python on a
transformer). `CallPlan` records it after a slow call, together with the
memref descriptors and the packed argument array, and a later call reuses
it when:

* no dictionary it was built from changed: every module's `__dict__`,
  `_parameters`, `_buffers` and `_modules`, the optimizer's `__dict__`, its
  `state` and each trained parameter's state (a parameter or buffer
  assigned, a submodule replaced, `model.eval()`, an attribute such as
  Dropout's `p` set, `optimizer.load_state_dict`, a state reset or
  replaced). CPython bumps a dictionary's version tag whenever a key is set
  to another object, added or removed, and the tags only grow: the sum of
  the tags is unchanged exactly when no dictionary changed.
* the modules' classes and the parameters' `requires_grad` are the same;
* the optimizer's parameter groups are the same objects over the same
  parameters with the same settings baked into the trace (a learning rate
  set by a scheduler only changes a 0-d argument: read at every call);
* every argument tensor (the optimizer's step counts included) has the same
  data pointer, dtype, sizes and strides (`p.data = ...`, `model.to(...)` keep
  the tensor but change these);
* the inputs have the traced shapes and dtypes, on the CPU.

Anything else falls back to the slow path, which builds a new plan. The
version tags are read with torch's `dict_version` (the guard of
torch.compile); where that is missing there is no fast path.
"""

import bisect
import operator

import torch

from ._optimizers import _constants, signature

try:
    from torch._C._dynamo.guards import dict_version as _dict_version
except ImportError:  # pragma: no cover - an older or stripped torch
    _dict_version = None
try:  # sizes and strides of many tensors in one call (torch.compile's)
    from torch._C._dynamo.guards import \
        assert_size_stride_grouped as _assert_size_stride_grouped
except ImportError:  # pragma: no cover
    _assert_size_stride_grouped = None

_DATA_PTR = torch.Tensor.data_ptr
_IS_CONTIGUOUS = torch.Tensor.is_contiguous
_STRIDE = torch.Tensor.stride
_SHAPE = operator.attrgetter("shape")
_DTYPE = operator.attrgetter("dtype")
_REQUIRES_GRAD = operator.attrgetter("requires_grad")


def _versions_work():
    """Whether dict_version behaves as the guards assume (a new tag when a
    key is set to another object, the same tag otherwise)."""
    if _dict_version is None:
        return False
    try:
        d = {"a": 1}
        before = _dict_version(d)
        d["a"] = d["a"]
        same = _dict_version(d) == before
        d["a"] = object()
        return same and _dict_version(d) > before
    except Exception:  # pragma: no cover
        return False


_VERSIONS = _versions_work()


def _all_equal(values, expected):
    """Whether the iterable `values` (as long as the list `expected`)
    equals it, without building a list: a list of a large model's
    parameters is a heap block that every call would add to its peak
    (memory_report() and max_memory do not count it)."""
    return all(map(operator.eq, values, expected))


def _same_layouts(tensors, sizes, strides):
    """Whether `tensors` have the `sizes` and `strides`."""
    if _assert_size_stride_grouped is not None:
        try:
            _assert_size_stride_grouped(tensors, sizes, strides)
            return True
        except AssertionError:
            return False
    return _all_equal(map(_SHAPE, tensors), sizes) and \
        _all_equal(map(_STRIDE, tensors), strides)


def hashable_setting(value):
    """`value` if it is a plain setting (a number, a string, None, or a tuple
    of those), else a marker of its type: the fingerprint must be hashable."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple) and all(
            v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return value
    return ("<%s>" % type(value).__name__,)


def traced_state(model, optimizer):
    """A fingerprint of what tracing reads besides the inputs' shapes: every
    module's training flag and public plain attributes (Dropout's p,
    BatchNorm's momentum and eps, ...), which parameters there are and which
    require gradients, the parameter groups and what the optimizer's traced
    step bakes in (_optimizers.signature: the settings that are not step
    arguments, the names of the state tensors)."""
    modules = tuple(
        (type(m).__name__, tuple(sorted(
            (k, hashable_setting(v)) for k, v in vars(m).items()
            if not k.startswith("_"))))
        for m in model.modules())
    params = tuple((name, id(p), p.requires_grad)
                   for name, p in model.named_parameters())
    buffers = tuple((name, id(b)) for name, b in model.named_buffers())
    groups = tuple(tuple(id(p) for p in group["params"])
                   for group in optimizer.param_groups)
    return (modules, params, buffers, groups, signature(optimizer))


class _Unplannable(Exception):
    """The call cannot take the fast path (the slow one handles it)."""


class CallPlan:
    """One variant's call, laid out for `inputs`' shapes (see the module
    docstring). Build it with `build` right after a slow call of that
    variant (the optimizer's states then exist); call `holds` before each
    `call`."""

    @classmethod
    def build(cls, step, variant, inputs):
        """The plan, or None when this call cannot have one (no version
        tags, a CUDA library, a state the slow path did not create, ...)."""
        if not _VERSIONS or variant.target != "cpu":
            return None
        try:
            return cls(step, variant, inputs)
        except _Unplannable:
            return None

    def __init__(self, step, variant, inputs):
        spec, model, opt = variant.spec, step.model, step.optimizer
        self.model, self.optimizer, self.variant = model, opt, variant
        self._guard_traced_state(model, opt)
        self._guard_tensors(spec, model, opt)
        self._lay_out(spec, variant, inputs)

    # -- guards ------------------------------------------------------------
    def _guard_traced_state(self, model, opt):
        self.modules = list(model.modules())
        self.types = list(map(type, self.modules))
        self.optimizer_type = type(opt)
        self.named = [p for _, p in model.named_parameters()]
        self.requires_grad = list(map(_REQUIRES_GRAD, self.named))
        self.groups = list(opt.param_groups)
        self.group_params = [list(map(id, g["params"])) for g in self.groups]
        self.modes = self.variant.spec.opt.modes
        self.group_structure = [_constants(g, m)
                                for g, m in zip(self.groups, self.modes)]
        self.group_versions = list(map(_dict_version, self.groups))
        self.dicts = [vars(opt)]
        for m in self.modules:
            self.dicts += [vars(m), m._parameters, m._buffers, m._modules]

    def _guard_tensors(self, spec, model, opt):
        if not isinstance(opt.state, dict):
            raise _Unplannable()
        states = []
        self.dicts.append(opt.state)
        for i, p in enumerate(spec.params):
            state = opt.state.get(p)
            if state is None:
                raise _Unplannable()
            self.dicts.append(state)
            for name in spec.opt.state_names(i):
                if name not in state:
                    raise _Unplannable()
                states.append(state[name])
        self.version = sum(map(_dict_version, self.dicts))
        buffers = dict(model.named_buffers())
        self.fixed = [*spec.params, *spec.frozen,
                      *(buffers[n] for n in spec.buffer_names), *states]
        watched = self.fixed
        if not all(t.device.type == "cpu" for t in watched) or \
                not all(map(_IS_CONTIGUOUS, watched)):
            raise _Unplannable()
        self.watched = watched
        self.pointers = list(map(_DATA_PTR, watched))
        self.sizes = [tuple(t.shape) for t in watched]
        self.strides = list(map(_STRIDE, watched))
        self.dtypes = list(map(_DTYPE, watched))

    def holds(self, step, inputs):
        """Whether a call with `inputs` (contiguous tensors) may take this
        plan: nothing it was built from changed."""
        if step.model is not self.model or \
                step.optimizer is not self.optimizer:
            return False
        for t, (shape, dtype) in zip(inputs, self.input_types):
            if t.shape != shape or t.dtype is not dtype or not t.is_cpu:
                return False
        if sum(map(_dict_version, self.dicts)) != self.version or \
                not _all_equal(map(type, self.modules), self.types) or \
                type(self.optimizer) is not self.optimizer_type or \
                not _all_equal(map(_REQUIRES_GRAD, self.named),
                               self.requires_grad):
            return False
        if not self._groups_hold():
            return False
        watched = self.watched
        return (_all_equal(map(_DATA_PTR, watched), self.pointers) and
                _all_equal(map(_DTYPE, watched), self.dtypes) and
                _same_layouts(watched, self.sizes, self.strides))

    def _groups_hold(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.groups):
            return False
        for k, g in enumerate(groups):
            if g is not self.groups[k] or \
                    len(g["params"]) != len(self.group_params[k]) or \
                    not _all_equal(map(id, g["params"]), self.group_params[k]):
                return False
            version = _dict_version(g)
            if version != self.group_versions[k]:
                # A step argument (the learning rate) or a baked-in one.
                if _constants(g, self.modes[k]) != self.group_structure[k]:
                    return False
                self.group_versions[k] = version
        return True

    # -- the call ----------------------------------------------------------
    def _lay_out(self, spec, variant, inputs):
        from ._call import PackedCall, descriptor
        library = variant.library()
        self.library, self.spec = library, spec
        self.input_types = [(t.shape, t.dtype) for t in inputs]
        if variant.hyper is None:
            raise _Unplannable()
        self.hyper = variant.hyper
        self.last_hyper = None
        self.indices = torch.arange(spec.batch, dtype=torch.int64) \
            if spec.layouts else None
        args = self.fixed + list(self.hyper) + list(inputs)
        if spec.layouts:
            args += [self.indices, torch.zeros((), dtype=torch.int64)]
        self.descriptors = [descriptor(t) for t in args]
        first_input = len(self.fixed) + len(self.hyper)
        self.input_descriptors = self.descriptors[first_input:]
        self.packed = PackedCall(self.descriptors +
                                 library.output_descriptors)
        in_place = variant.in_place
        self.copied = not in_place
        self.targets = []
        kept = 1 + len(spec.metrics)  # the loss and the metrics
        if self.copied:
            buffers = dict(self.model.named_buffers())
            num_params = len(spec.params)
            first_state = num_params + len(spec.frozen) + \
                len(spec.buffer_names)
            self.targets = list(spec.params) + \
                self.fixed[first_state:] + \
                [buffers[n] for n in spec.mutated_buffers]
            if len(self.targets) != len(library.outputs) - kept:
                raise _Unplannable()
        self.values = library.outputs[:-kept]
        self.loss = library.outputs[-kept:]
        # Spans written in place, sorted: an input must overlap none.
        written = {j for _, j in in_place}
        spans = sorted((t.data_ptr(), t.data_ptr() + t.numel() *
                        t.element_size()) for j, t in enumerate(self.fixed)
                       if j in written and t.numel())
        self.span_starts = [s for s, _ in spans]
        self.spans = spans

    def _check_inputs(self, inputs):
        for t in inputs:
            if not t.numel():
                continue
            start = t.data_ptr()
            end = start + t.numel() * t.element_size()
            k = bisect.bisect_right(self.span_starts, start)
            if (k and self.spans[k - 1][1] > start) or \
                    (k < len(self.spans) and self.spans[k][0] < end):
                from ._call import check_no_shared_storage
                check_no_shared_storage(
                    self.fixed + list(self.hyper) + list(inputs),
                    [j for _, j in self.variant.in_place])

    def _write_hyper(self):
        values = self.spec.opt.hyper_values()
        if values != self.last_hyper:
            self.hyper.host[:] = values
            self.last_hyper = values

    def call(self, inputs):
        """One call of the library on `inputs` (after `holds`); the loss
        (with the metrics)."""
        self._check_inputs(inputs)
        for d, t in zip(self.input_descriptors, inputs):
            d.allocated = d.aligned = t.data_ptr()
        if self.indices is not None:
            # The seed, drawn from torch's default generator as the slow
            # path draws it.
            seed = torch.randint(2 ** 63 - 1, (), dtype=torch.int64)
            d = self.input_descriptors[-1]
            d.allocated = d.aligned = seed.data_ptr()
        self._write_hyper()
        self.packed(self.library.function)
        if self.copied:
            with torch.no_grad():
                torch._foreach_copy_(self.targets, self.values)
        for p in self.spec.params:
            if p.grad is not None:
                p.grad = None
        loss, *metrics = [t.clone() for t in self.loss]
        return self.spec.metrics.pack(loss, metrics)

