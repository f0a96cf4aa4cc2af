"""What the compile cache of compile_train_step keys on.

Two levels:

* The trace (make_fx + torch-mlir, the slow part of a compile whose library
  is already cached) is kept in memory for the process, keyed by
  `trace_key`: the classes and code of the model's modules and of the loss
  function, every module's plain settings (training flag, Dropout's p, a
  configuration object's state, ...), the values of the context variables
  the code reads (transformers' output collector) in the compiling context,
  hooks, the parameters' and buffers' names, shapes, dtypes and
  `requires_grad`, the optimizer's class, the settings its traced step
  bakes in and the names of its state (by parameter name), the inputs'
  shapes and dtypes and the trace options. A
  deep copy of a model (ga_mlir.torch.compare trains several) or a second
  compile_train_step of the same model reuses the trace; the values of the
  parameters do not enter the trace (they are arguments of the step). A loss
  function or module whose key cannot be formed (a callable object of an
  unknown kind, a setting that is not a plain value) is traced again every
  time: a cache that might be stale is worse than none. GA_MLIR_TRACE_CACHE=0
  turns it off.
* The compiled library is cached on disk (GA_MLIR_CACHE_DIR) by a hash of
  the IR, the pipelines and `library_cpu(mcpu)`: for llc's -mcpu=native the
  real CPU's name and features, so that a cache directory shared between
  machines never hands a library built for another CPU.
"""

import functools
import hashlib
import logging
import os
import re
import contextvars
import subprocess
import threading
import types

import torch

from ._common import LLVM_BIN


class _Uncacheable(Exception):
    """A part of the step whose identity cannot be captured in a key."""


# Objects a traced function may refer to that cannot change the trace.
_SIDE_CHANNELS = (logging.Logger, logging.LoggerAdapter,
                  type(threading.Lock()), type(threading.RLock()))


_UNSET = object()  # a context variable without a value or default


def _plain(value):
    """`value` as a hashable plain value, or _Uncacheable."""
    if value is None or isinstance(value, (bool, int, float, str, bytes,
                                           torch.dtype, torch.device)):
        return value
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((str(k), _plain(v))
                                        for k, v in value.items()))
    if isinstance(value, torch.Tensor):
        # A captured constant tensor is baked into the trace by value.
        if value.numel() > 4096:
            raise _Uncacheable()
        return ("tensor", value.dtype, tuple(value.shape),
                tuple(value.detach().cpu().reshape(-1).tolist()))
    if isinstance(value, (types.FunctionType, types.MethodType)):
        return _function_key(value)
    if isinstance(value, _SIDE_CHANNELS):
        # A logger or a lock a forward refers to (every transformers
        # module's `logger`, its output-capturing decorator's lock) writes
        # messages or orders threads; it computes nothing the trace holds.
        return ("side channel", type(value).__name__)
    if isinstance(value, contextvars.ContextVar):
        # A context variable (transformers' output collector, set by its
        # output-capturing decorator around a forward): what a forward reads
        # from it is its value in the compiling context, which the trace
        # bakes in; the decorator's own `set` inside the forward is code the
        # key already holds. Keyed by identity too: two variables may share
        # a name.
        current = value.get(_UNSET)
        return ("context variable", id(value)) + (
            ("unset",) if current is _UNSET else ("set", _plain(current)))
    if not callable(value) and isinstance(getattr(value, "__dict__", None),
                                          dict):
        # A plain-data object (transformers' PretrainedConfig, a user's
        # settings class): its class and its whole state, underscored names
        # included (`_attn_implementation` chooses the attention's code).
        return ("state", id(type(value)), _plain(vars(value)))
    if isinstance(value, (types.ModuleType, type, types.BuiltinFunctionType,
                          functools.partial)) or callable(value):
        # Modules, classes, builtins: identity, stable within a process.
        if isinstance(value, functools.partial):
            return ("partial", _plain(value.func), _plain(value.args),
                    _plain(value.keywords))
        return ("object", id(value))
    raise _Uncacheable()


def _code_key(code, seen):
    """A code object and the plain values of the globals and nested code it
    refers to."""
    consts = tuple(_code_key(c, seen) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames)


def _function_key(fn, seen=None):
    seen = set() if seen is None else seen
    if isinstance(fn, types.MethodType):
        return ("method", _function_key(fn.__func__, seen), id(fn.__self__))
    if id(fn) in seen:
        return ("recursive", id(fn))
    seen.add(id(fn))
    code = fn.__code__
    referenced = []
    for name in code.co_names:
        if name in fn.__globals__:
            value = fn.__globals__[name]
            if isinstance(value, types.FunctionType):
                referenced.append((name, _function_key(value, seen)))
            elif isinstance(value, (types.ModuleType, type)):
                referenced.append((name, id(value)))
            else:
                referenced.append((name, _plain(value)))
    # A decorator's wrapper can hold itself in its closure (transformers'
    # layers): functions there share `seen`.
    closure = tuple(
        _function_key(c.cell_contents, seen)
        if isinstance(c.cell_contents, (types.FunctionType, types.MethodType))
        else _plain(c.cell_contents) for c in fn.__closure__ or ())
    return ("function", _code_key(code, seen), tuple(referenced), closure,
            _plain(fn.__defaults__), _plain(fn.__kwdefaults__))


def _module_key(module):
    parts = []
    for name, m in module.named_modules():
        cls = type(m)
        settings = []
        for key, value in sorted(vars(m).items()):
            if key.startswith("_"):
                continue
            settings.append((key, _plain(value)))
        hooks = tuple(
            _plain(h) for attr in ("_forward_hooks", "_forward_pre_hooks",
                                   "_backward_hooks")
            for h in getattr(m, attr, {}).values())
        forward = m.__dict__.get("forward")  # a per-instance patch
        parts.append((name, id(cls), _function_key(cls.forward)
                      if isinstance(cls.forward, types.FunctionType) else None,
                      tuple(settings), hooks,
                      _plain(forward) if forward is not None else None))
    params = tuple((n, tuple(p.shape), p.dtype, p.requires_grad)
                   for n, p in module.named_parameters())
    buffers = tuple((n, tuple(b.shape), b.dtype)
                    for n, b in module.named_buffers())
    return tuple(parts), params, buffers


def _optimizer_key(model, optimizer):
    """The optimizer's part of the key: its groups' parameters (by name) and
    what its traced step bakes in (_optimizers.signature: the settings that
    are not step arguments, the state names)."""
    from ._optimizers import signature
    names = {id(p): n for n, p in model.named_parameters()}
    params = tuple(tuple(names.get(id(p), ("foreign", id(p)))
                         for p in group["params"])
                   for group in optimizer.param_groups)
    return params, signature(optimizer)


def trace_key(model, loss_fn, optimizer, inputs, *options):
    """The key of the trace of this step, or None when it cannot be formed
    (then the step is traced again)."""
    if os.environ.get("GA_MLIR_TRACE_CACHE", "1") == "0":
        return None
    try:
        if isinstance(loss_fn, torch.nn.Module):
            loss = ("module", _module_key(loss_fn))
        elif isinstance(loss_fn, (types.FunctionType, types.MethodType,
                                  functools.partial)):
            loss = _plain(loss_fn)
        else:
            return None
        key = (torch.__version__, _module_key(model), loss,
               _optimizer_key(model, optimizer),
               tuple((tuple(t.shape), t.dtype) for t in inputs),
               _plain(options))
        hash(key)
        return key
    except (_Uncacheable, TypeError, AttributeError, RecursionError):
        return None


_TRACES = {}


def cached_export(export, spec_type, model, loss_fn, optimizer, inputs,
                  *options):
    """`export(model, loss_fn, optimizer, inputs, *options)` (ga_mlir.torch's
    export_train_step: the IR text and its argument layout), from the
    process's trace cache when the key is unchanged. The layout is rebuilt
    for this model and optimizer (`spec_type`: _Spec), whose tensors may be
    other ones than the traced model's (a copy)."""
    key = trace_key(model, loss_fn, optimizer, inputs, *options)
    if key is not None and key in _TRACES:
        text, unused, mutated, batch_dims, layouts, batch, metrics, \
            guards, checkpoints = _TRACES[key]
        spec = spec_type(model, optimizer, len(inputs), unused, mutated,
                         batch_dims, layouts)
        spec.batch, spec.metrics, spec.guards = batch, metrics, guards
        spec.user_checkpoints = checkpoints
        return text, spec
    text, spec = export(model, loss_fn, optimizer, inputs, *options)
    if key is not None:
        trainable = {n for n, p in model.named_parameters()
                     if p.requires_grad and any(
                         p is q for g in optimizer.param_groups
                         for q in g["params"])}
        _TRACES[key] = (text, trainable - set(spec.train_names),
                        set(spec.mutated_buffers), spec.batch_dims,
                        spec.layouts, spec.batch, spec.metrics,
                        getattr(spec, "guards", []),
                        getattr(spec, "user_checkpoints", 0))
    return text, spec


@functools.lru_cache(maxsize=None)
def _host_cpu():
    """LLVM's name of this machine's CPU and a digest of its features."""
    name = "unknown"
    try:
        out = subprocess.run([os.path.join(LLVM_BIN, "llc"), "--version"],
                             capture_output=True, text=True).stdout
        found = re.search(r"Host CPU:\s*(\S+)", out)
        if found:
            name = found.group(1)
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        pass
    return f"{name}+{hashlib.sha256(flags.encode()).hexdigest()[:12]}"


def library_cpu(mcpu):
    """What a library compiled with llc -mcpu=`mcpu` is specific to: for
    "native", the host CPU's name and features (e.g.
    "skylake-avx512+3f2a..."), else `mcpu` itself."""
    return _host_cpu() if mcpu == "native" else mcpu
