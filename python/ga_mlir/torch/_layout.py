"""The argument and result layout of a compiled training step, in one object.

The traced function `@train_step` takes, in this order: trainable
parameters, frozen parameters, buffers, optimizer states (per trainable
parameter, `num_states[i]` of them), 0-d hyper-parameters (`num_hyper` in
all: the settings of the parameter groups that are step arguments), then
the inputs; it returns the new parameters, the new states, the new values
of the buffers the forward updates (`mutated_buffers`), the loss and the
metrics loss_fn returns beside it (`metrics`: _metrics.Metrics.to_json).
`StepLayout` records that layout by name, shape and dtype, with what the
compiled library does with it (the results written in place into
arguments, the number of micro-batches, the target), and serializes to
JSON: it is the signature a saved step is checked against when it is
loaded (`check`). It also names the library's entry point (`entry_point`:
the packed `_ga_packed_train_step`, see ga_mlir._entry).

Format 3 (this one) describes the optimizer by its class and the
signature of its traced step (_optimizers.signature; format 2 had a kind
among SGD, Adam and AdamW and hyper-parameters per parameter). Format 2 adds
`entry_point` to format 1: format-1 libraries are called with one C
argument per tensor (at most 1024 through ctypes). Earlier formats are
refused with a message to save the step again.

Needs torch only (no torch-mlir, no ga-mlir library).
"""

import torch

from .._entry import PACKED_PREFIX
from ._common import CompileError
from ._metrics import Metrics
from ._spec import _Spec

FORMAT = 3
ENTRY_POINT = PACKED_PREFIX + "train_step"


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def check_tensor(tensor, shape, dtype, what, expected):
    """Refuses `tensor` (step-signature-mismatch) unless it has `shape` and
    the dtype named `dtype` (_dtype_name): "<what> is <its shape and
    dtype>; <expected>"."""
    if list(tensor.shape) != list(shape) or \
            _dtype_name(tensor.dtype) != dtype:
        raise CompileError(f"{what} is {list(tensor.shape)} "
                           f"{_dtype_name(tensor.dtype)}; {expected}",
                           code="step-signature-mismatch")


def _dtype(name):
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype):
        raise CompileError(f"unknown dtype '{name}' in a saved step",
                           code="saved-step-format")
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
        """The optimizer's class and the signature of its traced step (the
        settings baked in, those that are arguments, the state names), and
        the hyper-parameters of its groups when traced (informative: the
        arguments are read from param_groups at each call)."""
        groups = []
        for group in opt.optimizer.param_groups:
            groups.append({k: v for k, v in group.items() if k != "params"
                           and (v is None or isinstance(
                               v, (bool, int, float, str, tuple, list)))})
        return {"class": type(opt.optimizer).__name__,
                "signature": _json(opt.signature[2]), "groups": groups}

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
                "save the step again",
                code="saved-step-format")
        if d.get("format") == 2:
            raise CompileError(
                "saved step of format 2 (written by an earlier ga_mlir, "
                "whose step took SGD's, Adam's or AdamW's hyper-parameters "
                f"per parameter); this ga_mlir reads format {FORMAT} (the "
                "optimizer's own step, traced): compile and save the step "
                "again",
                code="saved-step-format")
        if d.get("format") != FORMAT:
            raise CompileError(f"saved step of format {d.get('format')!r}; "
                               f"this ga_mlir reads format {FORMAT}",
                               code="saved-step-format")
        if d.get("entry_point") != ENTRY_POINT:
            raise CompileError(f"saved step with entry point "
                               f"{d.get('entry_point')!r}; this ga_mlir "
                               f"calls {ENTRY_POINT}",
                               code="saved-step-format")
        return cls(**d)

    def arg_count(self):
        return (len(self.params) + len(self.frozen) + len(self.buffers) +
                sum(self.num_states) + self.num_hyper + len(self.inputs))

    def result_types(self):
        return [(tuple(s), _dtype(d)) for s, d in self.results]

    def input_key(self):
        return tuple((tuple(s), _dtype(d)) for s, d, _ in self.inputs)

    def check(self, model, optimizer, where="load_step"):
        """A _Spec of `model` and `optimizer` laid out as this layout, or
        CompileError naming the first difference."""
        named = dict(model.named_parameters())
        buffers = dict(model.named_buffers())
        train = [n for n, _, _ in self.params]
        for n in train:
            if n not in named:
                raise CompileError(f"{where}: the step was compiled for a "
                                   f"model with parameter '{n}', which this "
                                   "model does not have",
                                   code="step-signature-mismatch")
        known = set(train) | {n for n, _, _ in self.frozen}
        extra = [n for n in named if n not in known]
        if extra:
            raise CompileError(f"{where}: the model has parameters {extra} "
                               "that the step was not compiled with",
                               code="step-signature-mismatch")
        unused = {n for n in named if n not in train}
        spec = _Spec(model, optimizer, len(self.inputs), unused,
                     set(self.mutated_buffers))
        if spec.train_names != train:
            extra = [n for n in spec.train_names if n not in train]
            raise CompileError(
                f"{where}: the step trains the parameters {train}; this "
                f"model and optimizer train {spec.train_names}" +
                (f" (also {extra})" if extra else ""),
                code="step-signature-mismatch")
        for kind, recorded, table in (("parameter", self.params, named),
                                      ("parameter", self.frozen, named),
                                      ("buffer", self.buffers, buffers)):
            for n, shape, dtype in recorded:
                t = table.get(n)
                if t is None:
                    raise CompileError(f"{where}: the model has no {kind} "
                                       f"'{n}' (the step was compiled with "
                                       "it)",
                                       code="step-signature-mismatch")
                check_tensor(t, shape, dtype, f"{where}: {kind} '{n}'",
                             f"the step was compiled for {shape} {dtype}")
        if [n for n, _, _ in self.buffers] != spec.buffer_names:
            raise CompileError(f"{where}: the model's buffers are "
                               f"{spec.buffer_names}; the step was compiled "
                               f"for {[n for n, _, _ in self.buffers]}",
                               code="step-signature-mismatch")
        self.check_optimizer(spec.opt, where)
        spec.metrics = Metrics.from_json(getattr(self, "metrics", None))
        return spec

    def check_optimizer(self, opt, where):
        saved = self.optimizer
        if type(opt.optimizer).__name__ != saved["class"]:
            raise CompileError(f"{where}: the step was compiled for "
                               f"{saved['class']}; the optimizer is "
                               f"{type(opt.optimizer).__name__}",
                               code="step-signature-mismatch")
        now = _json(opt.signature[2])
        if now != saved["signature"]:
            raise CompileError(
                f"{where}: {_difference(now, saved['signature'])}",
                code="step-signature-mismatch")
        if opt.num_hyper() != self.num_hyper:
            raise CompileError(
                f"{where}: the optimizer's step takes {opt.num_hyper()} "
                "hyper-parameter arguments (settings, and a flag per "
                "parameter whose first step creates its state from the "
                f"gradient); the step was compiled with {self.num_hyper}",
                code="step-signature-mismatch")

    def check_inputs(self, inputs, where="step"):
        if len(inputs) != len(self.inputs):
            raise TypeError(f"{where}: expected {len(self.inputs)} inputs, "
                            f"got {len(inputs)}")
        for i, (t, (shape, dtype, _)) in enumerate(zip(inputs, self.inputs)):
            check_tensor(t, shape, dtype, f"{where}: input {i}",
                         f"the step was compiled for {shape} {dtype} (a "
                         "saved step is not traced again)")


def _difference(now, saved):
    """The first difference between two optimizer signatures (per group:
    baked-in settings, step arguments, state names per parameter), in
    words."""
    if len(now) != len(saved):
        return (f"the optimizer has {len(now)} parameter groups; the step "
                f"was compiled for {len(saved)}")
    for k, (a, b) in enumerate(zip(now, saved)):
        settings, compiled = dict(map(tuple, a[0])), dict(map(tuple, b[0]))
        for key in sorted(set(settings) | set(compiled)):
            if settings.get(key) != compiled.get(key):
                return (f"the optimizer's setting {key} of group {k} is "
                        f"{settings.get(key)!r}; the step was compiled "
                        f"with {compiled.get(key)!r} (a setting its step "
                        "takes as a Python number is baked into the step)")
        if a[1] != b[1]:
            return (f"the step arguments of group {k} are {a[1]}; the step "
                    f"was compiled with {b[1]}")
        if a[2] != b[2]:
            return (f"the optimizer's state of group {k} holds {a[2]} per "
                    f"parameter; the step was compiled for {b[2]}")
    return "the optimizer differs from the one the step was compiled for"


def _json(value):
    """`value` (tuples, plain values) as JSON reads it back."""
    import json
    return json.loads(json.dumps(value))


def flat_arguments(spec, model, inputs, for_trace=False, hyper=None):
    """The step's arguments in order. The 0-d hyper-parameters are new
    tensors, or written into `hyper` (the _call.HyperParameters of an earlier
    call: no allocation per call)."""
    buffers = dict(model.named_buffers())
    flat = [p.detach() for p in spec.params]
    flat += [p.detach() for p in spec.frozen]
    flat += [buffers[n].detach() for n in spec.buffer_names]
    for i, p in enumerate(spec.params):
        flat += spec.opt.state_tensors(p, i, for_trace)
    if hyper is None:
        flat += [torch.tensor(v, dtype=torch.float64)
                 for v in spec.opt.hyper_values()]
    else:
        hyper.write(spec.opt.hyper_values())
        flat += hyper
    flat += list(inputs)
    if spec.layouts:
        # The samples' indices (sliced per micro-batch by --ga-accumulate)
        # and the seed: drawn from torch's default generator at each call
        # (not for the trace), which advances it.
        flat.append(torch.arange(spec.batch, dtype=torch.int64))
        flat.append(torch.zeros((), dtype=torch.int64) if for_trace else
                    torch.randint(2 ** 63 - 1, (), dtype=torch.int64))
    return flat
