"""The argument and result layout of a compiled training step, in one object.

The traced function `@train_step` takes, in this order: trainable
parameters, frozen parameters, buffers, optimizer states (per trainable
parameter, `num_states[i]` of them), 0-d hyper-parameters (`num_hyper` per
trainable parameter), then the inputs; it returns the new parameters, the
new states, the new values of the buffers the forward updates
(`mutated_buffers`), the loss and the metrics loss_fn returns beside it
(`metrics`: _metrics.Metrics.to_json). `StepLayout` records that layout by
name, shape and dtype, with what the compiled library does with it (the
results written in place into arguments, the number of micro-batches, the
target), and serializes to JSON: it is the signature a saved step is checked
against when it is loaded (`check`). It also names the library's entry point
(`entry_point`: the packed `_ga_packed_train_step`, see ga_mlir._entry).

Format 2 (this one) is format 1 plus `entry_point`: format-1 libraries are
called with one C argument per tensor (at most 1024 through ctypes) and are
refused with a message to save the step again.

Needs torch only (no torch-mlir, no ga-mlir library).
"""

import torch

from .._entry import PACKED_PREFIX
from ._common import CompileError
from ._metrics import Metrics

FORMAT = 2
ENTRY_POINT = PACKED_PREFIX + "train_step"


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _dtype(name):
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype):
        raise CompileError(f"unknown dtype '{name}' in a saved step")
    return value


class StepLayout:
    """See the module docstring. `params`, `frozen`, `buffers`: lists of
    (name, shape, dtype name); `inputs`: (shape, dtype name, batch dim);
    `results`: (shape, dtype name) of the library's results in order;
    `in_place`: (result index, argument index) pairs written in place."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    @classmethod
    def from_spec(cls, spec, model, inputs, batch_dims, micro_batches,
                  target, in_place, results):
        named = dict(model.named_parameters())
        buffers = dict(model.named_buffers())

        def entry(name, t):
            return [name, list(t.shape), _dtype_name(t.dtype)]

        return cls(
            format=FORMAT, entry_point=ENTRY_POINT, target=target,
            micro_batches=micro_batches,
            params=[entry(n, named[n]) for n in spec.train_names],
            frozen=[entry(n, named[n]) for n in spec.frozen_names],
            buffers=[entry(n, buffers[n]) for n in spec.buffer_names],
            mutated_buffers=list(spec.mutated_buffers),
            num_states=list(spec.num_states),
            optimizer=cls._optimizer_signature(spec.opt),
            num_hyper=spec.opt.num_hyper(),
            inputs=[[list(t.shape), _dtype_name(t.dtype), d]
                    for t, d in zip(inputs, batch_dims)],
            results=[[list(s), _dtype_name(d)] for s, d in results],
            in_place=[list(p) for p in in_place],
            metrics=spec.metrics.to_json())

    @staticmethod
    def _optimizer_signature(opt):
        """The optimizer's kind, its per-parameter structural flags (baked
        into the step) and the hyper-parameters of its groups when traced
        (informative: they are arguments of the step)."""
        groups = []
        for group in opt.optimizer.param_groups:
            groups.append({k: v for k, v in group.items() if k != "params"
                           and (v is None or isinstance(
                               v, (bool, int, float, str, tuple, list)))})
        return {"kind": opt.kind, "class": type(opt.optimizer).__name__,
                "flags": [list(f) for f in opt.flags], "groups": groups}

    def to_dict(self):
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d):
        if d.get("format") == 1:
            raise CompileError(
                "saved step of format 1 (written by an earlier ga_mlir, "
                "whose library takes one C argument per tensor); this "
                f"ga_mlir reads format {FORMAT} (libraries called through "
                f"their packed entry point {ENTRY_POINT}): compile and "
                "save the step again")
        if d.get("format") != FORMAT:
            raise CompileError(f"saved step of format {d.get('format')!r}; "
                               f"this ga_mlir reads format {FORMAT}")
        if d.get("entry_point") != ENTRY_POINT:
            raise CompileError(f"saved step with entry point "
                               f"{d.get('entry_point')!r}; this ga_mlir "
                               f"calls {ENTRY_POINT}")
        return cls(**d)

    def arg_count(self):
        return (len(self.params) + len(self.frozen) + len(self.buffers) +
                sum(self.num_states) + self.num_hyper * len(self.params) +
                len(self.inputs))

    def result_types(self):
        return [(tuple(s), _dtype(d)) for s, d in self.results]

    def input_key(self):
        return tuple((tuple(s), _dtype(d)) for s, d, _ in self.inputs)

    def check(self, model, optimizer, where="load_step"):
        """A _Spec of `model` and `optimizer` laid out as this layout, or
        CompileError naming the first difference."""
        from ._export import _Spec
        named = dict(model.named_parameters())
        buffers = dict(model.named_buffers())
        train = [n for n, _, _ in self.params]
        for n in train:
            if n not in named:
                raise CompileError(f"{where}: the step was compiled for a "
                                   f"model with parameter '{n}', which this "
                                   "model does not have")
        known = set(train) | {n for n, _, _ in self.frozen}
        extra = [n for n in named if n not in known]
        if extra:
            raise CompileError(f"{where}: the model has parameters {extra} "
                               "that the step was not compiled with")
        unused = {n for n in named if n not in train}
        spec = _Spec(model, optimizer, len(self.inputs), unused,
                     set(self.mutated_buffers))
        if spec.train_names != train:
            extra = [n for n in spec.train_names if n not in train]
            raise CompileError(
                f"{where}: the step trains the parameters {train}; this "
                f"model and optimizer train {spec.train_names}" +
                (f" (also {extra})" if extra else ""))
        for kind, recorded, table in (("parameter", self.params, named),
                                      ("parameter", self.frozen, named),
                                      ("buffer", self.buffers, buffers)):
            for n, shape, dtype in recorded:
                t = table.get(n)
                if t is None:
                    raise CompileError(f"{where}: the model has no {kind} "
                                       f"'{n}' (the step was compiled with "
                                       "it)")
                if list(t.shape) != shape or _dtype_name(t.dtype) != dtype:
                    raise CompileError(
                        f"{where}: {kind} '{n}' is {list(t.shape)} "
                        f"{_dtype_name(t.dtype)}; the step was compiled "
                        f"for {shape} {dtype}")
        if [n for n, _, _ in self.buffers] != spec.buffer_names:
            raise CompileError(f"{where}: the model's buffers are "
                               f"{spec.buffer_names}; the step was compiled "
                               f"for {[n for n, _, _ in self.buffers]}")
        self.check_optimizer(spec.opt, where)
        spec.metrics = Metrics.from_json(getattr(self, "metrics", None))
        return spec

    def check_optimizer(self, opt, where):
        saved = self.optimizer
        if opt.kind != saved["kind"]:
            raise CompileError(f"{where}: the step was compiled for "
                               f"{saved['class']}; the optimizer is "
                               f"{type(opt.optimizer).__name__}")
        if [list(f) for f in opt.flags] != saved["flags"]:
            names = ("momentum on, nesterov, maximize" if opt.kind == "sgd"
                     else "maximize, amsgrad")
            raise CompileError(
                f"{where}: the optimizer's structural settings ({names}) "
                f"per parameter are {[list(f) for f in opt.flags]}; the step "
                f"was compiled with {saved['flags']}")

    def check_inputs(self, inputs, where="step"):
        if len(inputs) != len(self.inputs):
            raise TypeError(f"{where}: expected {len(self.inputs)} inputs, "
                            f"got {len(inputs)}")
        for i, (t, (shape, dtype, _)) in enumerate(zip(inputs, self.inputs)):
            if list(t.shape) != shape or _dtype_name(t.dtype) != dtype:
                raise CompileError(
                    f"{where}: input {i} is {list(t.shape)} "
                    f"{_dtype_name(t.dtype)}; the step was compiled for "
                    f"{shape} {dtype} (a saved step is not traced again)")
