"""Tracing a training step into one function and importing it with
torch-mlir."""

import contextlib
import os
import re
import traceback
import unittest.mock

import torch

from ._common import CompileError, patched_forwards
from ._decompositions import _decomposition_table, one_hot
from ._modules import batch_first_forms
from ._optimizers import _Optimizer


# Frames in these are not the user's (ga_mlir and torch).
_PACKAGE_DIRS = (
    os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))) + os.sep,
    os.path.dirname(os.path.abspath(torch.__file__)) + os.sep)


def _user_frames(stack_trace):
    """The frames of a node's stack trace outside torch and ga_mlir, in the
    traceback's format (outermost first)."""
    frames = re.split(r'(?m)^(?=  File ")', stack_trace or "")
    kept = []
    for frame in frames:
        m = re.match(r'\s*File "([^"]+)", line \d+', frame)
        if not m:
            continue
        path = os.path.abspath(m.group(1))
        if m.group(1).startswith("<") or path.startswith(_PACKAGE_DIRS) \
                or os.sep + "torch_mlir" + os.sep in path:
            continue
        kept.append(frame if frame.endswith("\n") else frame + "\n")
    return "".join(kept)


def _innermost_user_line(stack_trace):
    frames = re.findall(r'File "([^"]+)", line (\d+)', _user_frames(
        stack_trace))
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


class _LossModule(torch.nn.Module):
    """loss_fn(model, *inputs) as a module, so that torch.func.functional_call
    substitutes the traced parameters wherever loss_fn uses the model."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *inputs):
        return self.loss_fn(self.model, *inputs)


_RANDOM_OPS = ("bernoulli", "rand", "randn", "randint", "native_dropout",
               "normal", "uniform", "multinomial", "randperm", "exponential")


@contextlib.contextmanager
def _batch_norm_check(model, exact_statistics=False):
    """Refuses BatchNorm in training mode at the user's line that calls it,
    unless `exact_statistics` (--ga-accumulate's recompute-statistics: the
    batch statistics are computed over the whole batch in an earlier loop,
    and the running statistics are updated from them as PyTorch does, as
    results of the step). A cumulative average (momentum=None) is refused
    either way: its factor 1 / num_batches_tracked is a Python float that
    PyTorch computes from the buffer at every call."""
    handles = []

    def hook(module, args):
        if not module.training:
            return
        reason = None
        if not exact_statistics:
            reason = (f"{type(module).__name__} in training mode normalizes "
                      "with statistics of the whole batch, which "
                      "micro-batches cannot reproduce: pass "
                      "recompute_statistics=True (exact: the statistics in "
                      "an earlier loop over the micro-batches), or use "
                      "model.eval() for the normalization layers, or "
                      "GroupNorm/LayerNorm")
        elif module.momentum is None and module.track_running_stats:
            reason = (f"{type(module).__name__}(momentum=None) in training "
                      "mode: the cumulative average's factor 1 / "
                      "num_batches_tracked is computed in Python from the "
                      "buffer at every call, which a compiled step cannot "
                      "do: give a momentum")
        if reason:
            stack = "".join(traceback.format_stack())
            where = _innermost_user_line(stack) or "<unknown>"
            raise CompileError(f"{where}: error: {reason}")
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            handles.append(m.register_forward_pre_hook(hook))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _training_batch_norms(model):
    """(name prefix, module) of the BatchNorm layers in training mode that
    keep running statistics."""
    return [(prefix + "." if prefix else "", m)
            for prefix, m in model.named_modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
            and m.training and m.track_running_stats]


def _batch_norm_buffers(model):
    return {prefix + n for prefix, _ in _training_batch_norms(model)
            for n in ("running_mean", "running_var", "num_batches_tracked")}


@contextlib.contextmanager
def _explicit_batch_norm(model, updates):
    """While tracing: BatchNorm layers in training mode as explicit
    operations whose running-statistics updates go to `updates` (name ->
    new value) instead of being written into the buffers (an in-place write
    inside the grad transform is lost in tracing). The same arithmetic as
    PyTorch's kernel: biased variance to normalize, unbiased in the running
    variance, running = (1 - momentum) * running + momentum * batch."""
    forwards = []
    for prefix, m in _training_batch_norms(model):
        def forward(x, m=m, prefix=prefix):
            m._check_input_dim(x)
            dims = [0] + list(range(2, x.dim()))
            shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
            count = x.numel() // x.shape[1]
            mean = x.mean(dims)
            var = x.var(dims, correction=0)
            y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + m.eps)
            if m.affine:
                y = y * m.weight.view(shape) + m.bias.view(shape)
            momentum = m.momentum
            updates[prefix + "running_mean"] = \
                momentum * mean.detach() + (1 - momentum) * m.running_mean
            updates[prefix + "running_var"] = momentum * var.detach() * (
                count / (count - 1)) + (1 - momentum) * m.running_var
            updates[prefix + "num_batches_tracked"] = \
                m.num_batches_tracked + 1
            return y
        forwards.append((m, forward))
    with patched_forwards(forwards):
        yield


def _probe(model, loss_fn, inputs):
    """One eager forward and backward: the names of the parameters that the
    loss does not depend on (they get no gradient, None, so torch.optim
    leaves them and their state alone; the compiled step does too) and of
    the buffers that the forward updates in place (BatchNorm's running
    statistics in training mode; they become results of the step). The
    random number generator's state and the buffers are restored."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    buffers = list(model.named_buffers())
    saved = [(b, b._version, b.detach().clone()) for _, b in buffers]
    try:
        with torch.random.fork_rng(devices=[]), torch.enable_grad():
            loss = loss_fn(model, *inputs)
            if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
                raise CompileError("loss_fn must return a 0-d tensor (the "
                                   "loss of the whole batch)")
            grads = torch.autograd.grad(loss, [p for _, p in named],
                                        allow_unused=True)
    finally:
        # Updated: a new version, new values, or BatchNorm's running
        # statistics in training mode (its kernel writes them without a
        # version bump).
        mutated = {n for (n, _), (b, version, value) in zip(buffers, saved)
                   if b._version != version or not torch.equal(b, value)}
        mutated.update(_batch_norm_buffers(model))
        with torch.no_grad():
            for b, _, value in saved:
                b.copy_(value)
    return {n for (n, _), g in zip(named, grads) if g is None}, mutated


class _Spec:
    """The layout of the traced function's arguments and results."""

    def __init__(self, model, optimizer, num_inputs, unused=(),
                 mutated=()):
        named = dict(model.named_parameters())  # tied weights once
        in_optimizer = set()
        for group in optimizer.param_groups:
            in_optimizer.update(id(p) for p in group["params"])
        self.train_names = [n for n, p in named.items()
                            if id(p) in in_optimizer and p.requires_grad
                            and n not in unused]
        self.frozen_names = [n for n in named if n not in self.train_names]
        self.params = [named[n] for n in self.train_names]
        self.frozen = [named[n] for n in self.frozen_names]
        self.buffer_names = [n for n, _ in model.named_buffers()]
        # Buffers the forward updates (results after the states).
        self.mutated_buffers = [n for n in self.buffer_names if n in mutated]
        self.opt = _Optimizer(optimizer, self.params)
        self.num_states = [len(self.opt.state_names(i))
                           for i in range(len(self.params))]
        self.num_inputs = num_inputs

    def arg_count(self):
        return (len(self.params) + len(self.frozen) + len(self.buffer_names)
                + sum(self.num_states) + self.opt.num_hyper() *
                len(self.params) + self.num_inputs)


def _make_step_function(model, loss_fn, spec, max_grad_norm):
    wrapper = _LossModule(model, loss_fn)
    P, F, Bf = len(spec.params), len(spec.frozen), len(spec.buffer_names)
    S, H = sum(spec.num_states), spec.opt.num_hyper()

    def step(*flat):
        it = iter(flat)
        params = [next(it) for _ in range(P)]
        frozen = [next(it) for _ in range(F)]
        buffers = [next(it) for _ in range(Bf)]
        states = [next(it) for _ in range(S)]
        hyper = [[next(it) for _ in range(H)] for _ in range(P)]
        inputs = list(it)
        fixed = {"model." + n: t for n, t in zip(spec.frozen_names, frozen)}
        fixed.update({"model." + n: t
                      for n, t in zip(spec.buffer_names, buffers)})

        def loss_of(ps):
            values = dict(fixed)
            values.update({"model." + n: p
                           for n, p in zip(spec.train_names, ps)})
            # BatchNorm's new running statistics come out as the auxiliary
            # result, not as writes into the buffers.
            updates = {}
            with _explicit_batch_norm(model, updates), \
                    batch_first_forms(model):
                loss = torch.func.functional_call(wrapper, values,
                                                  tuple(inputs))
            if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
                raise CompileError("loss_fn must return a 0-d tensor (the "
                                   "loss of the whole batch)")
            return loss, [updates[n] for n in spec.mutated_buffers]

        (grads, (loss, new_buffers)) = torch.func.grad_and_value(
            loss_of, has_aux=True)(params)
        grads = list(grads)
        if max_grad_norm is not None:
            # torch.nn.utils.clip_grad_norm_ (foreach, norm_type 2).
            norms = [torch.linalg.vector_norm(g, 2.0) for g in grads]
            total = torch.linalg.vector_norm(torch.stack(norms), 2.0)
            coef = torch.clamp(max_grad_norm / (total + 1e-6), max=1.0)
            grads = [g * coef for g in grads]
        new_params, new_states = [], []
        k = 0
        for i, (p, g) in enumerate(zip(params, grads)):
            st = states[k:k + spec.num_states[i]]
            k += spec.num_states[i]
            new_p, new_st = spec.opt.update(i, p, g, st, hyper[i])
            new_params.append(new_p)
            new_states += new_st
        return (*new_params, *new_states, *new_buffers, loss)

    return step


def export_train_step(model, loss_fn, optimizer, example_inputs,
                      max_grad_norm=None, indexing="one-hot",
                      exact_statistics=False):
    """Traces the training step and imports it with torch-mlir. Returns
    (MLIR text with locations, _Spec). The function is `@train_step`; its
    arguments: trainable parameters, frozen parameters, buffers, optimizer
    states, 0-d hyper-parameters (per parameter), then the inputs; its
    results: new parameters, new states, new values of the buffers that the
    forward updates (spec.mutated_buffers), loss. BatchNorm in training mode
    needs `exact_statistics` (the step is then rewritten with
    recompute-statistics)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with _batch_norm_check(model, exact_statistics):
        unused, mutated = _probe(model, loss_fn, example_inputs)
    others = sorted(mutated - _batch_norm_buffers(model))
    if others:
        raise CompileError(
            f"the forward updates the buffers {', '.join(others)} in place, "
            "which the traced step would lose: only BatchNorm's running "
            "statistics are carried as results of the step")
    spec = _Spec(model, optimizer, len(example_inputs), unused, mutated)
    if not spec.params:
        raise CompileError("the optimizer has no trainable parameter of the "
                           "model")
    for p in spec.params:
        if p.dtype != torch.float32 or p.device.type != "cpu":
            raise CompileError("parameters must be float32 CPU tensors")
    fn = _make_step_function(model, loss_fn, spec, max_grad_norm)
    flat = _flat_arguments(spec, model, example_inputs, for_trace=True)
    with _batch_norm_check(model, exact_statistics), \
            sdpa_kernel(SDPBackend.MATH), \
            unittest.mock.patch.object(torch.nn.functional, "one_hot",
                                       one_hot):
        try:
            gm = make_fx(torch.func.functionalize(fn),
                         decomposition_table=_decomposition_table(indexing),
                         record_stack_traces=True)(*flat)
        except CompileError:
            raise
        except Exception as error:
            # Data-dependent control flow, an op without a trace, ...:
            # located at the user's innermost line, with PyTorch's reason.
            where = _innermost_user_line("".join(
                traceback.format_tb(error.__traceback__)))
            reason = str(error).strip().splitlines()
            raise CompileError(
                f"{where or '<unknown>'}: error: PyTorch could not trace the "
                f"step ({type(error).__name__}: "
                f"{reason[0] if reason else ''})") from None
    for node in gm.graph.nodes:
        if node.op == "call_function":
            name = str(node.target).split(".")[1] if "." in str(
                node.target) else str(node.target)
            if name in _RANDOM_OPS:
                where = _innermost_user_line(node.meta.get("stack_trace"))
                raise CompileError(
                    f"{where or '<unknown>'}: error: the step draws random "
                    f"numbers ({node.target}: Dropout in training mode?), "
                    "which the compiled step cannot reproduce: use "
                    "model.eval() for Dropout, or pass the mask as an input "
                    "and multiply by it in the model")
        if "stack_trace" in node.meta:
            node.meta["stack_trace"] = _user_frames(node.meta["stack_trace"])
    module = _import_to_linalg(gm)
    text = module.operation.get_asm(enable_debug_info=True)
    foreign = sorted(set(re.findall(r"\btm_tensor\.[a-z_]+", text)))
    if foreign:
        # torch-mlir's own dialect for ops linalg has no form of (scatter,
        # sort, ...): ga-mlir takes upstream dialects only.
        raise CompileError(
            f"{_first_location(module.operation, 'tm_tensor.')}: error: "
            f"torch-mlir lowered part of the step to {', '.join(foreign)}, "
            "which ga-mlir does not take (an indexing op such as index_put "
            "or scatter in the model?)")
    return text, spec


def _first_location(operation, prefix):
    """file:line of the first op named `prefix`... under `operation` that
    has a file location, or "<unknown>"."""
    stack = [operation]
    while stack:
        op = stack.pop(0)
        if op.name.startswith(prefix):
            found = re.search(r'"([^"]+)":(\d+)', str(op.location))
            if found:
                return f"{found.group(1)}:{found.group(2)}"
        stack[:0] = [inner.operation for region in op.regions
                     for block in region.blocks for inner in block.operations]
    return "<unknown>"


def _import_to_linalg(gm):
    """torch-mlir's FX importer, then its two lowerings (to the Torch
    backend contract, to linalg-on-tensors), with the located diagnostics
    of a failure in the exception."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras.fx_importer import FxImporter
    from torch_mlir.passmanager import PassManager

    context = ir.Context()
    torch_dialect.register_dialect(context)
    importer = FxImporter(context=context)
    importer.import_stateless_graph(gm.graph, func_name="train_step")
    module = importer.module
    with context:
        for pipeline in (
                "builtin.module(func.func(torch-match-quantized-custom-ops),"
                "torchdynamo-export-to-torch-backend-pipeline{extra-library=})",
                "builtin.module(torch-backend-to-linalg-on-tensors-backend-"
                "pipeline{allow-non-finites=true})"):
            try:
                PassManager.parse(pipeline).run(module.operation)
            except ir.MLIRError as error:
                lines = [f"{d.location}: error: {d.message}"
                         for d in error.error_diagnostics]
                raise CompileError("torch-mlir could not lower the step to "
                                   "linalg-on-tensors:\n" + "\n".join(
                                       lines)) from None
    return module


def _flat_arguments(spec, model, inputs, for_trace=False, hyper=None):
    """The step's arguments in order. The 0-d hyper-parameters are new
    tensors, or written into `hyper` (the tensors of an earlier call: no
    allocation per call)."""
    buffers = dict(model.named_buffers())
    flat = [p.detach() for p in spec.params]
    flat += [p.detach() for p in spec.frozen]
    flat += [buffers[n].detach() for n in spec.buffer_names]
    for i, p in enumerate(spec.params):
        flat += spec.opt.state_tensors(p, i)
    values = [v for i, p in enumerate(spec.params)
              for v in spec.opt.hyper_values(p, i)]
    if hyper is None:
        flat += [torch.tensor(v, dtype=torch.float32) for v in values]
    else:
        for t, v in zip(hyper, values):
            t.fill_(v)
        flat += hyper
    flat += list(inputs)
    return flat
