"""Compile a PyTorch training step with gradient accumulation.

    from ga_mlir.torch import compile_train_step
    step = compile_train_step(model, loss_fn, optimizer,
                              example_inputs=(x, y), micro_batches=4)
    loss = step(x, y)

One call of `step` does what

    loss_fn(model, x, y).backward(); optimizer.step(); optimizer.zero_grad()

does on the whole batch, in N micro-batches whose gradients are accumulated
inside one compiled function: `model`'s parameters and the optimizer's state
tensors are updated in place (their storage is kept: `data_ptr()` does not
change) and the loss is returned as a 0-d tensor.

How: forward, backward (`torch.func.grad_and_value`) and the functional
optimizer update are traced as one function (`make_fx` with PyTorch's core
ATen decompositions), imported with torch-mlir's FX importer to
linalg-on-tensors, rewritten by `--ga-accumulate` (the per-sample arguments
are the positional inputs) and compiled ahead of time for the CPU
(`--ga-lower-to-cpu`, CBLAS, results into caller buffers), then called
through ctypes on the tensors' own memory. The library is cached by a hash of
the IR and the options (GA_MLIR_CACHE_DIR, default ~/.cache/ga_mlir).

Hyper-parameters (learning rate, betas, ...) are read from the optimizer's
`param_groups` at every call and passed as arguments, so a learning-rate
scheduler works without recompiling; structural flags (momentum or not,
nesterov, maximize, amsgrad) are part of the compiled step.

MLIR locations come from the traced nodes' Python stack traces, reduced to
the user's frames: a step that `--ga-accumulate` refuses raises
`CompileError` whose message starts with the user's file and line.
"""

import contextlib
import ctypes
import hashlib
import math
import os
import subprocess
import sys
import tempfile
import threading

import logging

import numpy  # noqa: F401  (torch-mlir needs it; fail early if missing)
import torch

# make_fx imports torch.utils.flop_counter, which warns that triton (a GPU
# compiler torch does not need here) is missing.
logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)

from . import PipelineError, run_pipeline

__all__ = ["compile_train_step", "CompiledTrainStep", "CompileError",
           "export_train_step"]

LLVM_BIN = os.environ.get("GA_LLVM_BIN", "/usr/lib/llvm-22/bin")


class CompileError(RuntimeError):
    """The step cannot be compiled exactly: unsupported model, optimizer or
    option, or a refusal of `--ga-accumulate` (located at the user's line)."""


#===----------------------------------------------------------------------===#
# Decompositions
#===----------------------------------------------------------------------===#

aten = torch.ops.aten


def _one_hot(target, num_classes, dim):
    """`target` compared with an iota along a new dimension `dim` (bool)."""
    shape = [1] * (target.dim() + 1)
    shape[dim] = num_classes
    classes = torch.arange(num_classes, device=target.device).view(shape)
    return target.unsqueeze(dim) == classes


def _nll_loss_forward(self, target, weight, reduction, ignore_index):
    """aten.nll_loss_forward with PyTorch's exact semantics (ignore_index,
    class weights, reductions) as a comparison with an iota and a sum over
    the classes, instead of a gather: each sum has one non-zero term."""
    channel_dim = 0 if self.dim() < 2 else 1
    num_classes = self.shape[channel_dim]
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = num_classes
        self = self * weight.view(shape)
    valid = target != ignore_index
    hot = _one_hot(target, num_classes, channel_dim)
    picked = torch.where(hot, self, 0.0).sum(channel_dim)
    result = torch.where(valid, -picked, 0.0)
    if reduction == 0 and self.dim() > 1:
        return result, self.new_zeros(())
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = num_classes
        w = weight.view(shape).expand(self.shape)
        wsum = torch.where(hot, w, 0.0).sum(channel_dim)
        total_weight = torch.where(valid, wsum, 0.0).sum()
    else:
        total_weight = valid.sum().to(self.dtype)
    if reduction == 2:
        result = result.sum()
    elif reduction == 1:
        result = result.sum() / total_weight
    return result, total_weight


def _nll_loss_backward(grad_output, self, target, weight, reduction,
                       ignore_index, total_weight):
    """aten.nll_loss_backward as a select on the comparison with an iota
    (PyTorch's decomposition scatters -1 into zeros)."""
    channel_dim = 0 if self.dim() < 2 else 1
    num_classes = self.shape[channel_dim]
    if reduction == 1:
        grad_output = grad_output / total_weight
    if self.dim() == 1 and target.dim() > 0:
        target = target[0]
    hot = _one_hot(target, num_classes, channel_dim)
    grad_input = torch.where(hot, -1.0, 0.0).to(self.dtype)
    target = target.unsqueeze(channel_dim)
    if grad_input.dim() > grad_output.dim() > 0:
        grad_output = grad_output.unsqueeze(channel_dim)
    if weight is not None:
        shape = [1] * self.dim()
        shape[channel_dim] = num_classes
        grad_output = grad_output * weight.reshape(shape)
    grad_output = torch.where(target != ignore_index, grad_output, 0)
    return grad_input * grad_output


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False,
               sparse=False):
    """aten.embedding as a product of the one-hot rows with the table: one
    non-zero term per sum, so the rows are copied exactly (finite weights)."""
    hot = _one_hot(indices, weight.shape[0], indices.dim()).to(weight.dtype)
    return torch.matmul(hot, weight)


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """aten.embedding_dense_backward as a product of the transposed one-hot
    rows with the output gradient (PyTorch's decomposition is an index_put
    with accumulation, a scatter)."""
    if scale_grad_by_freq:
        raise CompileError("nn.Embedding(scale_grad_by_freq=True) is not "
                           "supported")
    valid = indices != padding_idx
    hot = _one_hot(indices, num_weights, indices.dim())
    hot = (hot & valid.unsqueeze(-1)).to(grad_output.dtype)
    dim = grad_output.shape[-1]
    return torch.matmul(hot.reshape(-1, num_weights).t(),
                        grad_output.reshape(-1, dim))


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v) * (2 // len(v))


def _tiles(self, kernel, stride, padding, dilation=1, ceil_mode=False):
    """Whether 2-d pooling windows tile the input exactly (no overlap, no
    padding, nothing left over)."""
    kernel, stride = _pair(kernel), _pair(stride or kernel)
    return (stride == kernel and _pair(padding) == (0, 0) and
            _pair(dilation) == (1, 1) and not ceil_mode and
            self.shape[-2] % kernel[0] == 0 and
            self.shape[-1] % kernel[1] == 0)


def _upsample(t, kernel):
    """Each element of the last two dimensions repeated kernel times."""
    kh, kw = _pair(kernel)
    *lead, h, w = t.shape
    return t.reshape(*lead, h, 1, w, 1).expand(*lead, h, kh, w, kw).reshape(
        *lead, h * kh, w * kw)


def _max_pool2d_with_indices(self, kernel_size, stride=(), padding=0,
                             dilation=1, ceil_mode=False):
    """max_pool2d with the flat input index of each window's first maximum,
    from strided slices of the input and a max over the window (torch-mlir
    computes the indices with a gather inside a linalg body)."""
    if ceil_mode:
        raise CompileError("max_pool2d(ceil_mode=True) is not supported")
    (kh, kw), (sh, sw) = _pair(kernel_size), _pair(stride or kernel_size)
    (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
    h, w = self.shape[-2:]
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    x = self
    if ph or pw:
        x = torch.nn.functional.pad(x, (pw, pw, ph, ph), value=-math.inf)
    windows = torch.stack([
        x[..., i * dh:i * dh + (ho - 1) * sh + 1:sh,
          j * dw:j * dw + (wo - 1) * sw + 1:sw]
        for i in range(kh) for j in range(kw)], dim=-1)
    values, which = torch.max(windows, dim=-1)
    rows = torch.arange(ho, device=self.device).view(ho, 1) * sh - ph
    cols = torch.arange(wo, device=self.device).view(1, wo) * sw - pw
    indices = (rows + torch.div(which, kw, rounding_mode="floor") * dh) * w \
        + cols + torch.remainder(which, kw) * dw
    return values, indices


def _max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
                                      padding, dilation, ceil_mode, indices):
    """The gradient goes to the input position the forward recorded in
    `indices` (the first maximum of the window, as PyTorch's kernel picks
    it), as a comparison of the indices with an iota (PyTorch's
    decomposition is a scatter-add)."""
    h, w = self.shape[-2:]
    positions = torch.arange(h * w, device=self.device)
    if _tiles(self, kernel_size, stride, padding, dilation, ceil_mode):
        hit = _upsample(indices, kernel_size) == positions.view(h, w)
        return torch.where(hit, _upsample(grad_output, kernel_size), 0.0)
    # Overlapping windows: sum over the windows of the one that hits.
    lead = self.shape[:-2]
    hit = indices.reshape(*lead, -1, 1) == positions
    grad = torch.where(hit, grad_output.reshape(*lead, -1, 1), 0.0).sum(-2)
    return grad.reshape(self.shape)


def _avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
                         ceil_mode, count_include_pad, divisor_override):
    """Windows that tile the input: each input element gets its window's
    gradient divided by the window size, as PyTorch's kernel computes it."""
    if not _tiles(self, kernel_size, stride, padding, 1, ceil_mode):
        raise CompileError("the backward of avg_pool2d with overlapping or "
                           "padded windows is not supported")
    kh, kw = _pair(kernel_size)
    divisor = divisor_override or kh * kw
    return _upsample(grad_output, kernel_size) / divisor


def _batch_norm_no_training(input, weight, bias, running_mean, running_var,
                            momentum, eps):
    """BatchNorm in evaluation mode as PyTorch's CPU kernel computes it
    (x * alpha + beta with alpha = weight / sqrt(var + eps)); torch-mlir's
    lowering of the op fails on its empty saved statistics."""
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    alpha = 1 / torch.sqrt(running_var + eps)
    if weight is not None:
        alpha = alpha * weight
    beta = -running_mean * alpha
    if bias is not None:
        beta = bias + beta
    out = input * alpha.view(shape) + beta.view(shape)
    return out, input.new_zeros((0,)), input.new_zeros((0,))


def _native_batch_norm(input, weight, bias, running_mean, running_var,
                       training, momentum, eps):
    if training:
        return NotImplemented  # refused before tracing (_batch_norm_check)
    return _batch_norm_no_training(input, weight, bias, running_mean,
                                   running_var, momentum, eps)


def _squeeze_dims(self, dims):
    """aten.squeeze.dims as a reshape (torch-mlir does not import it)."""
    if isinstance(dims, int):
        dims = [dims]
    dims = {d % max(self.dim(), 1) for d in dims}
    shape = [s for i, s in enumerate(self.shape)
             if not (i in dims and s == 1)]
    return self.reshape(shape)


def _decomposition_table(indexing):
    from torch._decomp import core_aten_decompositions
    table = dict(core_aten_decompositions())
    table[aten.squeeze.dims] = _squeeze_dims
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    table[aten.embedding_dense_backward.default] = _embedding_dense_backward
    table[aten.max_pool2d_with_indices_backward.default] = \
        _max_pool2d_with_indices_backward
    table[aten.avg_pool2d_backward.default] = _avg_pool2d_backward
    table[aten.max_pool2d_with_indices.default] = _max_pool2d_with_indices
    table[aten._native_batch_norm_legit_no_training.default] = \
        _batch_norm_no_training
    table[aten.native_batch_norm.default] = _native_batch_norm
    if indexing == "one-hot":
        table[aten.nll_loss_forward.default] = _nll_loss_forward
        table[aten.embedding.default] = _embedding
    elif indexing != "gather":
        raise CompileError(f"indexing={indexing!r}: expected 'one-hot' or "
                           "'gather'")
    return table


#===----------------------------------------------------------------------===#
# Optimizers: the functional updates of torch.optim's single-tensor kernels
#===----------------------------------------------------------------------===#


class _Optimizer:
    """What a torch.optim optimizer contributes to the compiled step: state
    tensors per parameter, 0-d hyper-parameter arguments per parameter
    (recomputed from `param_groups` at each call, in float64 as torch.optim's
    Python code computes them) and the traced update, operation by operation
    as torch.optim's single-tensor kernels do it."""

    def __init__(self, optimizer, params):
        self.optimizer = optimizer
        self.group_of = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                self.group_of[p] = group
        name = type(optimizer).__name__
        if isinstance(optimizer, torch.optim.AdamW):
            self.kind = "adamw"
        elif isinstance(optimizer, torch.optim.Adam):
            self.kind = "adam"
        elif isinstance(optimizer, torch.optim.SGD):
            self.kind = "sgd"
        else:
            raise CompileError(f"optimizer {name} is not supported (SGD, "
                               "Adam and AdamW are)")
        self.flags = []
        for p in params:
            g = self.group_of[p]
            if any(isinstance(v, torch.Tensor) for k, v in g.items()
                   if k != "params") or isinstance(
                       g.get("betas", (0,))[0], torch.Tensor):
                raise CompileError(f"{name}: tensor hyper-parameters are not "
                                   "supported")
            if self.kind == "sgd":
                if g["nesterov"] and (g["momentum"] <= 0 or
                                      g["dampening"] != 0):
                    raise CompileError("SGD: nesterov needs momentum > 0 and "
                                       "zero dampening")
                self.flags.append((g["momentum"] != 0, bool(g["nesterov"]),
                                   bool(g.get("maximize", False))))
            else:
                if g.get("amsgrad"):
                    raise CompileError(f"{name}(amsgrad=True) is not "
                                       "supported")
                if self.kind == "adam" and g.get("decoupled_weight_decay"):
                    raise CompileError("Adam(decoupled_weight_decay=True) is "
                                       "not supported: use AdamW")
                self.flags.append((bool(g.get("maximize", False)),))

    def state_names(self, index):
        if self.kind == "sgd":
            return ["momentum_buffer"] if self.flags[index][0] else []
        return ["exp_avg", "exp_avg_sq"]

    def num_hyper(self):
        return 5 if self.kind == "sgd" else 7

    def state_tensors(self, p, index):
        """The state tensors of `p`; missing ones are created as torch.optim
        creates them on its first step."""
        state = self.optimizer.state[p]
        out = []
        for name in self.state_names(index):
            t = state.get(name)
            if t is None:
                t = torch.zeros_like(p, memory_format=torch.contiguous_format)
            out.append(t)
        return out

    def commit_state(self, p, index, tensors):
        state = self.optimizer.state[p]
        for name, t in zip(self.state_names(index), tensors):
            state[name] = t
        if self.kind != "sgd":
            if "step" not in state:
                state["step"] = torch.tensor(0.0, dtype=torch.float32)
            state["step"] += 1

    def hyper_values(self, p, index):
        g = self.group_of[p]
        state = self.optimizer.state[p]
        if self.kind == "sgd":
            # buf = mu * buf + w * grad; on the first step torch.optim sets
            # buf = grad: the zero buffer with mu = 0, w = 1 gives exactly that.
            first = state.get("momentum_buffer") is None
            mu = 0.0 if first else g["momentum"]
            w = 1.0 if first else 1.0 - g["dampening"]
            return [-g["lr"], g["weight_decay"], mu, w, g["momentum"]]
        beta1, beta2 = g["betas"]
        step = float(state["step"]) + 1.0 if "step" in state else 1.0
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = g["lr"] / bias_correction1
        if self.kind == "adamw":
            decay = 1 - g["lr"] * g["weight_decay"]
        else:
            decay = g["weight_decay"]
        return [1 - beta1, beta2, 1 - beta2, bias_correction2 ** 0.5,
                -step_size, decay, g["eps"]]

    def update(self, index, p, grad, states, hyper):
        """Traced: the new parameter and the new states."""
        if self.kind == "sgd":
            neg_lr, weight_decay, mu, w, momentum = hyper
            has_momentum, nesterov, maximize = self.flags[index]
            if maximize:
                grad = -grad
            grad = grad + weight_decay * p
            new_states = []
            if has_momentum:
                buf = states[0] * mu + w * grad
                new_states.append(buf)
                grad = grad + momentum * buf if nesterov else buf
            return p + neg_lr * grad, new_states
        one_minus_beta1, beta2, one_minus_beta2, bc2_sqrt, neg_step_size, \
            decay, eps = hyper
        if self.flags[index][0]:
            grad = -grad
        if self.kind == "adamw":
            p = p * decay
        else:
            grad = grad + decay * p
        exp_avg, exp_avg_sq = states
        exp_avg = torch.lerp(exp_avg, grad, one_minus_beta1)
        exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
        denom = torch.sqrt(exp_avg_sq) / bc2_sqrt + eps
        return p + neg_step_size * exp_avg / denom, [exp_avg, exp_avg_sq]


#===----------------------------------------------------------------------===#
# Tracing
#===----------------------------------------------------------------------===#

_PACKAGE_DIRS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep
    for m in (torch, sys.modules[__name__.rpartition(".")[0]]))


def _user_frames(stack_trace):
    """The frames of a node's stack trace outside torch and ga_mlir, in the
    traceback's format (outermost first)."""
    import re
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
    import re
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
def _batch_norm_check(model):
    """Refuses BatchNorm in training mode at the user's line that calls it:
    its statistics couple the samples of the batch. (--ga-accumulate's
    recompute-statistics would make the normalization exact, but the running
    statistics' in-place update is not traced through the grad transform
    yet.)"""
    import traceback
    handles = []

    def hook(module, args):
        if module.training:
            stack = "".join(traceback.format_stack())
            where = _innermost_user_line(stack) or "<unknown>"
            raise CompileError(
                f"{where}: error: {type(module).__name__} in training mode "
                "normalizes with statistics of the whole batch, which "
                "micro-batches cannot reproduce: use model.eval() for the "
                "normalization layers, or GroupNorm/LayerNorm")
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            handles.append(m.register_forward_pre_hook(hook))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


class _Spec:
    """The layout of the traced function's arguments and results."""

    def __init__(self, model, optimizer, num_inputs):
        named = dict(model.named_parameters())  # tied weights once
        in_optimizer = set()
        for group in optimizer.param_groups:
            in_optimizer.update(id(p) for p in group["params"])
        self.train_names = [n for n, p in named.items()
                            if id(p) in in_optimizer and p.requires_grad]
        self.frozen_names = [n for n in named if n not in self.train_names]
        self.params = [named[n] for n in self.train_names]
        self.frozen = [named[n] for n in self.frozen_names]
        self.buffer_names = [n for n, _ in model.named_buffers()]
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
            loss = torch.func.functional_call(wrapper, values, tuple(inputs))
            if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
                raise CompileError("loss_fn must return a 0-d tensor (the "
                                   "loss of the whole batch)")
            return loss

        grads, loss = torch.func.grad_and_value(loss_of)(params)
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
        return (*new_params, *new_states, loss)

    return step


def export_train_step(model, loss_fn, optimizer, example_inputs,
                      max_grad_norm=None, indexing="one-hot"):
    """Traces the training step and imports it with torch-mlir. Returns
    (MLIR text with locations, _Spec). The function is `@train_step`; its
    arguments: trainable parameters, frozen parameters, buffers, optimizer
    states, 0-d hyper-parameters (per parameter), then the inputs; its
    results: new parameters, new states, loss."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.attention import SDPBackend, sdpa_kernel

    spec = _Spec(model, optimizer, len(example_inputs))
    if not spec.params:
        raise CompileError("the optimizer has no trainable parameter of the "
                           "model")
    for p in spec.params:
        if p.dtype != torch.float32 or p.device.type != "cpu":
            raise CompileError("parameters must be float32 CPU tensors")
    fn = _make_step_function(model, loss_fn, spec, max_grad_norm)
    flat = _flat_arguments(spec, model, example_inputs, for_trace=True)
    with _batch_norm_check(model), sdpa_kernel(SDPBackend.MATH):
        gm = make_fx(torch.func.functionalize(fn), decomposition_table=_decomposition_table(indexing),
                     record_stack_traces=True)(*flat)
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
    return text, spec


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


def _flat_arguments(spec, model, inputs, for_trace=False):
    buffers = dict(model.named_buffers())
    flat = [p.detach() for p in spec.params]
    flat += [p.detach() for p in spec.frozen]
    flat += [buffers[n].detach() for n in spec.buffer_names]
    for i, p in enumerate(spec.params):
        flat += spec.opt.state_tensors(p, i)
    for i, p in enumerate(spec.params):
        flat += [torch.tensor(v, dtype=torch.float32)
                 for v in spec.opt.hyper_values(p, i)]
    flat += list(inputs)
    return flat


#===----------------------------------------------------------------------===#
# Compilation
#===----------------------------------------------------------------------===#

# ga-opt options that compile_train_step passes through (Python spelling ->
# pipeline, option).
_ACCUMULATE_OPTIONS = {
    "accumulator_type": "accumulator-type",
    "allow_ghost_batch": "allow-ghost-batch",
    "recompute_statistics": "recompute-statistics",
    "fuse": "fuse",
}
_LOWER_OPTIONS = {
    "blas": "blas",
    "vector_width": "vector-width",
    "fuse_elementwise": "fuse-elementwise",
    "static_temporaries": "static-temporaries",
    "openmp": "openmp",
    "num_threads": "num-threads",
}


def _option_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _pipeline(micro_batches, batch_args, options):
    acc = [f"micro-batches={micro_batches}",
           "batch-args=" + ",".join(f"{i}:{d}" for i, d in batch_args)]
    low = ["c-interface=1", "out-params=1"]
    # fuse-elementwise folds the reshapes around PyTorch's matrix products
    # ([B, T, D] -> [B*T, D]) into them, and a product with two row
    # dimensions is no longer a CBLAS call: off by default here (a
    # GPT-style step ran 15 s instead of 0.9 s with it).
    defaults = {"blas": True, "static_temporaries": True,
                "fuse_elementwise": False}
    merged = dict(defaults)
    merged.update(options)
    for key, value in sorted(merged.items()):
        if value is None:
            continue
        if key in _ACCUMULATE_OPTIONS:
            acc.append(f"{_ACCUMULATE_OPTIONS[key]}={_option_text(value)}")
        elif key in _LOWER_OPTIONS:
            low.append(f"{_LOWER_OPTIONS[key]}={_option_text(value)}")
        else:
            raise TypeError(f"compile_train_step: unknown option {key!r}")
    return (f"builtin.module(ga-accumulate{{{' '.join(acc)}}},"
            f"ga-lower-to-cpu{{{' '.join(low)}}})")


def _cache_dir():
    root = os.environ.get("GA_MLIR_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ga_mlir")
    os.makedirs(root, exist_ok=True)
    return root


def _run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(f"{os.path.basename(cmd[0])} failed:\n"
                           f"{result.stderr.strip()}")


def _compile_library(ir, pipeline, mcpu, blas):
    """The shared library of `ir` under `pipeline`, from the cache when the
    same IR was compiled with the same options before."""
    from . import library_path
    key = hashlib.sha256("\0".join(
        [ir, pipeline, mcpu, os.path.realpath(library_path()),
         str(os.path.getmtime(library_path()))]).encode()).hexdigest()[:24]
    directory = os.path.join(_cache_dir(), key)
    lib = os.path.join(directory, "libstep.so")
    if os.path.exists(lib):
        return lib
    try:
        lowered = run_pipeline(ir, pipeline)
    except PipelineError as error:
        raise CompileError(
            "ga-mlir refused the training step:\n" + "\n".join(
                d.rstrip("\n") for d in error.diagnostics)) from None
    work = tempfile.mkdtemp(prefix="step-", dir=_cache_dir())
    with open(os.path.join(work, "step.mlir"), "w") as f:
        f.write(ir)
    with open(os.path.join(work, "step.lowered.mlir"), "w") as f:
        f.write(lowered)
    ll, obj = os.path.join(work, "step.ll"), os.path.join(work, "step.o")
    _run([os.path.join(LLVM_BIN, "mlir-translate"), "--mlir-to-llvmir",
          os.path.join(work, "step.lowered.mlir"), "-o", ll])
    _run([os.path.join(LLVM_BIN, "llc"), "-O3", f"-mcpu={mcpu}",
          "-filetype=obj", "-relocation-model=pic", ll, "-o", obj])
    runtime = os.path.join(os.path.dirname(LLVM_BIN), "lib")
    _run([os.path.join(LLVM_BIN, "clang"), "-shared", "-Wl,-Bsymbolic",
          "--rtlib=compiler-rt", obj, "-o", os.path.join(work, "libstep.so")]
         + (["-lopenblas"] if blas else []) +
         ["-lm", f"-L{runtime}", "-lmlir_c_runner_utils",
          f"-Wl,-rpath,{runtime}"])
    os.remove(ll)
    os.remove(obj)
    try:
        os.rename(work, directory)
    except OSError:  # another process compiled it first
        pass
    return lib if os.path.exists(lib) else os.path.join(work, "libstep.so")


#===----------------------------------------------------------------------===#
# Calling
#===----------------------------------------------------------------------===#

_DESCRIPTORS = {}


def _descriptor_type(rank):
    if rank not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p),
                  ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,),
                                  {"_fields_": fields})
    return _DESCRIPTORS[rank]


def _descriptor(t):
    d = _descriptor_type(t.dim())()
    d.allocated = d.aligned = t.data_ptr()
    d.offset = 0
    for i, (size, stride) in enumerate(zip(t.shape, t.stride())):
        d.sizes[i] = size
        d.strides[i] = stride
    return d


class _Variant:
    """One compiled library, for one set of input shapes."""

    def __init__(self, lib, spec, results):
        self.handle = ctypes.CDLL(lib)
        self.function = self.handle._mlir_ciface_train_step
        self.function.restype = None
        self.outputs = [torch.empty(shape, dtype=dtype)
                        for shape, dtype in results]
        self.output_descriptors = [ctypes.byref(_descriptor(t))
                                   for t in self.outputs]
        self.lock = threading.Lock()


class CompiledTrainStep:
    """The compiled step: call it with the inputs of one whole batch."""

    def __init__(self, model, loss_fn, optimizer, example_inputs,
                 micro_batches=None, micro_batch_size=None,
                 max_grad_norm=None, target="cpu", batch_dims=None,
                 indexing="one-hot", mcpu="native", **options):
        if target != "cpu":
            raise CompileError(f"target={target!r}: only 'cpu' is supported")
        if (micro_batches is None) == (micro_batch_size is None):
            raise TypeError("pass exactly one of micro_batches= and "
                            "micro_batch_size=")
        for key in options:
            if key not in _ACCUMULATE_OPTIONS and key not in _LOWER_OPTIONS:
                raise TypeError(f"compile_train_step: unknown option {key!r}")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.micro_batches, self.micro_batch_size = micro_batches, \
            micro_batch_size
        self.max_grad_norm = max_grad_norm
        self.indexing, self.mcpu, self.options = indexing, mcpu, options
        self.num_inputs = len(example_inputs)
        self.batch_dims = list(batch_dims) if batch_dims is not None else \
            [0] * self.num_inputs
        if len(self.batch_dims) != self.num_inputs:
            raise TypeError("batch_dims needs one dimension per input")
        self._variants = {}
        self._variant(tuple(example_inputs))

    def _key(self, inputs):
        return tuple((tuple(t.shape), t.dtype) for t in inputs)

    def _variant(self, inputs):
        key = self._key(inputs)
        if key in self._variants:
            return self._variants[key]
        for t in inputs:
            if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
                raise CompileError("inputs must be CPU tensors")
        batch = {t.shape[d] for t, d in zip(inputs, self.batch_dims)}
        if len(batch) != 1:
            raise CompileError(f"inputs disagree on the batch size: {batch}")
        batch = batch.pop()
        n = self.micro_batches or -(-batch // self.micro_batch_size)
        if not 1 <= n <= batch:
            raise CompileError(f"{n} micro-batches for a batch of {batch}")
        ir, spec = export_train_step(
            self.model, self.loss_fn, self.optimizer, inputs,
            self.max_grad_norm, self.indexing)
        first_input = spec.arg_count() - self.num_inputs
        pipeline = _pipeline(n, [(first_input + i, d) for i, d in
                                 enumerate(self.batch_dims)], self.options)
        lib = _compile_library(ir, pipeline, self.mcpu,
                               self.options.get("blas", True))
        results = [(p.shape, p.dtype) for p in spec.params]
        for i, p in enumerate(spec.params):
            results += [(p.shape, p.dtype)] * spec.num_states[i]
        results.append(((), torch.float32))
        variant = _Variant(lib, spec, results)
        variant.spec, variant.micro_batches = spec, n
        self._variants[key] = variant
        return variant

    @property
    def ir(self):
        """Not kept: see the cache directory (step.mlir)."""
        return None

    def __call__(self, *inputs):
        if len(inputs) != self.num_inputs:
            raise TypeError(f"expected {self.num_inputs} inputs, got "
                            f"{len(inputs)}")
        inputs = tuple(t.contiguous() for t in inputs)
        v = self._variant(inputs)
        spec = v.spec
        with v.lock, torch.no_grad():
            flat = _flat_arguments(spec, self.model, inputs)
            for t in flat:
                if not t.is_contiguous():
                    raise CompileError("parameters, buffers and optimizer "
                                       "states must be contiguous")
            descriptors = [_descriptor(t) for t in flat]
            v.function(*[ctypes.byref(d) for d in descriptors],
                       *v.output_descriptors)
            # The new values into the parameters' and states' own storage.
            out = iter(v.outputs)
            for p in spec.params:
                p.copy_(next(out))
            k = len(spec.params) + len(spec.frozen) + \
                len(spec.buffer_names)
            for i, p in enumerate(spec.params):
                states = flat[k:k + spec.num_states[i]]
                k += spec.num_states[i]
                for s in states:
                    s.copy_(next(out))
                spec.opt.commit_state(p, i, states)
            loss = next(out).clone()
            for p in spec.params:
                p.grad = None
        return loss


def compile_train_step(model, loss_fn, optimizer, example_inputs,
                       micro_batches=None, micro_batch_size=None, **kwargs):
    """Compiles `loss_fn(model, *inputs).backward(); optimizer.step();
    optimizer.zero_grad()` with gradient accumulation over micro-batches.

    model: a torch.nn.Module (float32 parameters on the CPU).
    loss_fn(model, *inputs): the scalar loss of the whole batch.
    optimizer: torch.optim.SGD (momentum, dampening, nesterov, weight decay,
        maximize), Adam or AdamW over (some of) the model's parameters.
    example_inputs: the per-sample inputs of one batch (tensors).
    micro_batches=N, or micro_batch_size=M (N = ceil(B / M)).
    max_grad_norm: clip the accumulated gradient as clip_grad_norm_ does.
    batch_dims: the batch dimension of each input (default 0).
    target: "cpu".
    indexing: "one-hot" (default; nll_loss and embedding as comparisons with
        an iota) or "gather" (PyTorch's gather forward; needs the exact
        rewrite of gathers in linalg payloads).
    mcpu: llc's -mcpu (default "native").
    ga-opt options: accumulator_type, allow_ghost_batch,
        recompute_statistics, fuse (of --ga-accumulate); blas,
        vector_width, fuse_elementwise, static_temporaries, openmp,
        num_threads (of --ga-lower-to-cpu).
    """
    return CompiledTrainStep(model, loss_fn, optimizer, example_inputs,
                             micro_batches=micro_batches,
                             micro_batch_size=micro_batch_size, **kwargs)
