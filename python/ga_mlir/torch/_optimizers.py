"""Any torch.optim optimizer in the compiled step: its own `step()`, traced.

The step does not reimplement optimizers. After the gradients, it runs the
optimizer's own `step()` once on a shadow optimizer (`_shadow`: the same
class and settings, its parameters the traced ones, `p.grad` the traced
gradient, its state the traced state tensors), in torch.optim's
single-tensor form with tensors for everything that changes from step to
step (`_FORMS`: foreach=False, fused=False, differentiable=False; the
default capturable=False where it traces, else capturable=True:
_CAPTURABLE; the trace runs under PyTorch's compiling state, in which
torch.optim's `_get_value` keeps tensors). Hyper-parameters are float64
arguments and 0-d states are widened to float64 in the step (`widened`),
as torch.optim's Python numbers are. Functionalized, the in-place updates become the new parameters
and the new state tensors, results of the step.

* State: what the class creates on its first step is learnt by running
  that step eagerly on copies with dummy gradients (`layouts`): the names,
  shapes and dtypes after a step, and whether the values it creates depend
  on the gradient. Missing state that does not (Adam's zero moments and
  step 0, Rprop's step sizes) is created before the first call as the first
  step would (`_initial_states`), so that every call takes the same
  arguments. Where it does (SGD's momentum buffer, a copy of the first
  gradient), the step is traced twice for those parameters, with the state
  and without it (the first step, which creates it), and a 0-d argument
  per parameter selects the first step's results while the state is
  missing. The state lives in `optimizer.state` in torch.optim's own
  format.
* Hyper-parameters: each float setting of a group (lr, betas, eps, weight
  decay, momentum, ...) is a 0-d tensor argument of the step, recomputed
  from `param_groups` at every call, wherever the class takes a tensor there
  (`_probe`: the optimizer's step traced alone with it as a tensor; where
  PyTorch takes a Scalar, alpha= or value=, a tensor is multiplied in
  instead: _TensorScalars); the others are constants of the trace, part
  of its cache key (`signature`), so that changing one traces the step
  again.
"""

import collections
import contextlib
import inspect
import traceback

import torch

from . import _traced_numbers
from ._common import CompileError
from ._locations import UNLOCATED

# The settings that select torch.optim's traceable single-tensor form, where
# a class has them.
_FORMS = {"foreach": False, "fused": False, "differentiable": False,
          "capturable": True}

_REFUSED = {
    "LBFGS": "torch.optim.LBFGS evaluates the loss again through a closure "
             "several times per step, which a compiled step (one forward and "
             "backward over the batch) cannot do: use another optimizer",
    "SparseAdam": "torch.optim.SparseAdam needs sparse gradients "
                  "(nn.Embedding(sparse=True)), and the compiled step's "
                  "gradients are dense: use Adam or AdamW",
}


@contextlib.contextmanager
def _compiling():
    """PyTorch's compiling state (torch.compiler.is_compiling() is True):
    torch.optim keeps step counts as tensors and skips its eager device
    checks of capturable=True."""
    from torch._export.utils import _compiling_state_context
    with _compiling_state_context():
        yield


def _plain(value):
    """A hashable, JSON-friendly form of a setting (its identity for an
    object that has no plain value)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, torch.Tensor) and value.numel() <= 16:
        return ["tensor", value.detach().cpu().reshape(-1).tolist()]
    return ["object", type(value).__name__, id(value)]


def _freeze(value):
    return tuple(_freeze(v) for v in value) if isinstance(value, list) \
        else value


def _candidates(group):
    """The float settings of `group` that may be step arguments: (key,
    None) for a float, (key, i) for element i of a tuple of floats."""
    out = []
    for k, v in group.items():
        if k == "params" or isinstance(v, bool):
            continue
        if isinstance(v, float):
            out.append((k, None))
        elif isinstance(v, tuple) and v and all(
                isinstance(x, float) and not isinstance(x, bool) for x in v):
            out += [(k, i) for i in range(len(v))]
    return out


def _value(group, key):
    k, i = key
    return group[k] if i is None else group[k][i]


def _with_values(group, values):
    """`group` with the settings `values` ((key, value) pairs) replaced."""
    g = dict(group)
    for (k, i), v in values:
        if i is None:
            g[k] = v
        else:
            parts = list(g[k])
            parts[i] = v
            g[k] = tuple(parts)
    return g


def _constants(group, modes):
    """The settings of `group` that the trace bakes in (all but the
    parameters and the step arguments `modes`), as a hashable key."""
    out = []
    for k, v in sorted(group.items()):
        if k == "params" or (k, None) in modes:
            continue
        if isinstance(v, tuple) and any((k, i) in modes
                                        for i in range(len(v))):
            v = tuple("<argument>" if (k, i) in modes else x
                      for i, x in enumerate(v))
        out.append((k, _freeze(_plain(v))))
    return tuple(out)


def refuse_unsupported(optimizer):
    """CompileError for an optimizer the compiled step cannot run."""
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise CompileError(f"the optimizer must be a torch.optim.Optimizer "
                           f"(got {type(optimizer).__name__})",
                           code="invalid-argument")
    for cls in type(optimizer).__mro__:
        if cls.__module__.startswith("torch.optim") and \
                cls.__name__ in _REFUSED:
            raise CompileError(_REFUSED[cls.__name__],
                               code="unsupported-optimizer")
    from torch.optim import optimizer as module
    if optimizer._optimizer_step_pre_hooks or \
            optimizer._optimizer_step_post_hooks or \
            module._global_optimizer_pre_hooks or \
            module._global_optimizer_post_hooks:
        raise CompileError(
            f"{type(optimizer).__name__}: step hooks "
            "(register_step_pre_hook, register_step_post_hook) are not "
            "supported: the compiled step does not call optimizer.step()",
            code="unsupported-optimizer")
    for group in optimizer.param_groups:
        for k, v in group.items():
            if k != "params" and (isinstance(v, torch.Tensor) or (
                    isinstance(v, tuple) and
                    any(isinstance(x, torch.Tensor) for x in v))):
                raise CompileError(
                    f"{type(optimizer).__name__}: a tensor hyper-parameter "
                    f"({k}) is not supported: give it as a Python number "
                    "(the compiled step takes it as an argument anyway)",
                    code="unsupported-optimizer")


# Per class: whether its step is traced in the capturable=True form. The
# default form (capturable=False) is tried first: where it traces (its step
# count still a tensor: _get_value keeps it under the compiling state), its
# arithmetic is PyTorch's default one, operation for operation; where it
# reads a value in Python (RAdam's rectification, ASGD's mu.item() != 1), the
# capturable form.
_CAPTURABLE = {}


def _in_forms(settings, cls=None):
    out = dict(settings)
    for k, v in _FORMS.items():
        if k in out:
            out[k] = _CAPTURABLE.get(cls, True) if k == "capturable" else v
    return out


def _shadow(optimizer, groups):
    """An optimizer of `optimizer`'s class and settings without calling its
    constructor: `groups` ((settings, params) pairs) as its param_groups,
    in the traceable forms, an empty state, no hooks."""
    cls = type(optimizer)
    shadow = cls.__new__(cls)
    # Not "step": an LR scheduler wraps the instance's step().
    shadow.__dict__.update({k: v for k, v in vars(optimizer).items()
                            if k != "step"})
    shadow.defaults = _in_forms(optimizer.defaults, cls)
    shadow.state = collections.defaultdict(dict)
    shadow.param_groups = []
    for settings, params in groups:
        g = _in_forms(settings, cls)
        g["params"] = list(params)
        shadow.param_groups.append(g)
    shadow._optimizer_step_pre_hooks = collections.OrderedDict()
    shadow._optimizer_step_post_hooks = collections.OrderedDict()
    return shadow


def _scaled(t, s):
    return t * _as_operand(s, t.dtype) if t.dim() else t * s


def _as_operand(s, dtype):
    """A 0-d tensor `s` in an operation on tensors of `dtype`: cast to it,
    as PyTorch's type promotion computes (torch-mlir mixes dtypes wrongly:
    a float64 learning rate times a float32 tensor)."""
    return s.to(dtype) if isinstance(s, torch.Tensor) and not s.dim() and \
        s.dtype != dtype and s.is_floating_point() else s


# PyTorch's Scalar arguments (alpha=, value=) given a 0-d tensor: the same
# arithmetic with tensor operations, so that a hyper-parameter can be a
# step argument where torch.optim passes it as such a Scalar (SGD's lr,
# Adam's 1 - beta2).
_TENSOR_SCALARS = {
    "add": lambda a, b, s: torch.add(a, _scaled(b, s)),
    "add_": lambda a, b, s: a.add_(_scaled(b, s)),
    "sub": lambda a, b, s: torch.sub(a, _scaled(b, s)),
    "sub_": lambda a, b, s: a.sub_(_scaled(b, s)),
    # PyTorch's kernels compute a + value * x * y and a + value * x / y,
    # left to right: the same order, the same rounding.
    "addcmul": lambda a, x, y, s: torch.add(a, _scaled(x, s) * y),
    "addcmul_": lambda a, x, y, s: a.add_(_scaled(x, s) * y),
    "addcdiv": lambda a, x, y, s: torch.add(a, _scaled(x, s) / y),
    "addcdiv_": lambda a, x, y, s: a.add_(_scaled(x, s) / y),
}


class _TensorScalars(torch.overrides.TorchFunctionMode):
    """Rewrites the calls of _TENSOR_SCALARS whose alpha= or value= is a
    tensor (a traced step would read its value in Python), keeps the number
    Tensor.item() reads as a 0-d tensor (_traced_numbers), and casts a 0-d
    float operand to the dtype of the operation's tensors, as PyTorch's
    type promotion computes it (torch-mlir mixes dtypes wrongly: Muon's
    bfloat16 clamp(min=eps), a float64 hyper-parameter times a float32
    tensor)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.item:  # a number kept in the trace
            return _traced_numbers.item(args[0])
        composite = _traced_numbers.composite_in_place(func)
        if composite is not None:
            return composite(*args, **kwargs)
        name = getattr(func, "__name__", None)
        if name in _TENSOR_SCALARS:
            for key in ("alpha", "value"):
                if isinstance(kwargs.get(key), torch.Tensor) and \
                        len(kwargs) == 1:
                    return _TENSOR_SCALARS[name](*args, kwargs[key])
        # 0-d operands of another float dtype than the tensors': at theirs.
        # (Without one, the first 0-d operand not in float64: a float64
        # hyper-parameter acts as the Python number it stands for, as in
        # Muon's bfloat16 norm.clamp(min=eps).)
        tensors = [a for a in args if isinstance(a, torch.Tensor) and
                   a.is_floating_point()]
        tensors = [a for a in tensors if a.dim()] or \
            [a for a in tensors if a.dtype != torch.float64]
        if tensors and name is not None:
            dtype = tensors[0].dtype
            args = tuple(_as_operand(a, dtype) for a in args)
            kwargs = {k: _as_operand(v, dtype) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def widened(t, p):
    """A 0-d float32 state of a parameter `p` that is not 0-d (a step count,
    NAdam's mu_product) in float64 for the traced step, so that what derives
    from it (1 - beta2 ** step) is computed as torch.optim's Python numbers
    are, not with float32's cancellation; other states as they are. The
    states of a 0-d parameter stay as they are: its moments are 0-d too,
    and torch.optim computes them in the parameter's dtype."""
    return t.to(torch.float64) if t.dim() == 0 and p.dim() and \
        t.dtype == torch.float32 else t.clone()


def _run(shadow):
    """`shadow`'s step() without torch.optim's wrapper of every step (a
    profiler range, which would be traced, and the step hooks, refused)."""
    step = type(shadow).step
    if getattr(step, "hooked", False):
        step = step.__wrapped__
    with torch.no_grad(), _TensorScalars(), \
            _traced_numbers.builtins_as_tensors(type(shadow)):
        step(shadow)


class _Recording(dict):
    """A parameter's state that keeps a copy of the first value set under
    each name (the state a step creates, before the step updates it)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.first = {}

    def __setitem__(self, key, value):
        if key not in self.first and key not in self:
            self.first[key] = value.detach().clone() if isinstance(
                value, torch.Tensor) else value
        super().__setitem__(key, value)


def _full(p, t):
    """A copy of the state tensor `t` of `p` at its whole shape (a sharded
    optimizer keeps rows of it: zeros stand in, for learning shapes)."""
    if t.dim() and t.shape[0] != p.shape[0] and \
            tuple(t.shape[1:]) == tuple(p.shape[1:]):
        return torch.zeros(p.shape, dtype=t.dtype)
    return t.detach().clone().cpu()


def _eager_step(optimizer, params, seed, with_state=True):
    """Runs `optimizer`'s step eagerly on copies of `params` (and of their
    state, `with_state`) with dummy gradients drawn from `seed`; returns,
    per parameter, its state after the step (a _Recording)."""
    gen = torch.Generator().manual_seed(seed)
    copies = {}
    groups = []
    wanted = {id(p) for p in params}
    for group in optimizer.param_groups:
        members = [p for p in group["params"] if id(p) in wanted]
        if not members:
            continue
        qs = []
        for p in members:
            q = p.detach().clone().cpu()
            q.grad = torch.randn(q.shape, generator=gen, dtype=q.dtype)
            copies[p] = q
            qs.append(q)
        groups.append((group, qs))
    shadow = _shadow(optimizer, groups)
    shadow.state = collections.defaultdict(_Recording)
    for p, q in copies.items():
        present = (optimizer.state.get(p) or {}) if with_state else {}
        shadow.state[q] = _Recording(
            {k: _full(p, v) if isinstance(v, torch.Tensor) else v
             for k, v in present.items()})
    with _compiling():
        _run(shadow)
    return [shadow.state[copies[p]] for p in params]


class _Layout:
    """A parameter's state after a step: names, whole shapes and dtypes, and
    whether the state a first step creates depends on the gradient."""

    def __init__(self, names, shapes, dtypes, from_gradient):
        self.names, self.shapes, self.dtypes = names, shapes, dtypes
        self.from_gradient = from_gradient


_LAYOUTS = {}


def _layout_key(optimizer, p):
    group = next(g for g in optimizer.param_groups
                 if any(q is p for q in g["params"]))
    return (type(optimizer), _constants(group, ()), tuple(p.shape), p.dtype)


def layouts(optimizer, params):
    """The _Layout of each of `params` (memoized by class, settings and
    shape), learnt from the first step (without state; with the present
    state where the class needs it: Adagrad creates its state in its
    constructor)."""
    keys = [_layout_key(optimizer, p) for p in params]
    missing = [p for p, k in zip(params, keys) if k not in _LAYOUTS]
    if missing:
        name = type(optimizer).__name__
        try:
            try:
                first = _eager_step(optimizer, missing, 1, False)
                second = _eager_step(optimizer, missing, 2, False)
            except Exception:
                first = _eager_step(optimizer, missing, 1)
                second = _eager_step(optimizer, missing, 2)
        except CompileError:
            raise
        except Exception as error:
            raise CompileError(
                f"{_where(optimizer, error)}: error: {name}.step() fails on "
                "the model's parameters with dummy gradients (run to learn "
                "the state it creates): "
                f"{type(error).__name__}: {_first_line(error)}",
                code="optimizer-not-traceable") from None
        for p, a, b in zip(missing, first, second):
            for k, v in a.items():
                if not isinstance(v, torch.Tensor):
                    raise CompileError(
                        f"{name} keeps '{k}' in its state as a Python "
                        f"{type(v).__name__}, which a traced step cannot "
                        "carry from one call to the next: keep it as a "
                        "tensor",
                        code="unsupported-optimizer")
            from_gradient = set(a.first) != set(b.first) or any(
                not isinstance(a.first[k], torch.Tensor) or
                not torch.equal(a.first[k], b.first[k]) for k in a.first)
            _LAYOUTS[_layout_key(optimizer, p)] = _Layout(
                list(a), [tuple(v.shape) for v in a.values()],
                [v.dtype for v in a.values()], from_gradient)
    return [_LAYOUTS[k] for k in keys]


def _initial_states(optimizer, params):
    """Creates the missing state of `params` as their first step would
    (the values a step on dummy gradients creates first, where they do not
    depend on the gradient)."""
    for p, state in zip(params, _eager_step(optimizer, params, 1)):
        optimizer.state[p].update(
            {k: v.to(p.device) for k, v in state.first.items()})


def arg_names(optimizer, p, layout):
    """The names of the state tensors of `p` that the step takes: the
    present ones, or those its first step creates."""
    state = optimizer.state.get(p)
    if state:
        return tuple(state)
    return tuple(layout.names)


def _first_line(error):
    lines = str(error).strip().splitlines()
    return lines[0] if lines else ""


def _where(optimizer, error):
    """file:line of the innermost frame of `error` in the optimizer's own
    code (its class's file, else torch.optim's)."""
    try:
        own = inspect.getsourcefile(type(optimizer))
    except TypeError:
        own = None
    frames = traceback.extract_tb(error.__traceback__)
    for test in (lambda f: f.filename == own,
                 lambda f: "/torch/optim/" in f.filename):
        found = [f for f in frames if test(f)]
        if found:
            return f"{found[-1].filename}:{found[-1].lineno}"
    return UNLOCATED


_PLANS = collections.defaultdict(list)

# Operations of a default (capturable=False) form that the compiled step
# refuses later (writes by a boolean mask, sizes that depend on the data:
# Rprop's sign[sign.gt(0)] = etaplus): the capturable form has torch.where.
_UNLOWERABLE = ("index_put", "nonzero", "masked_select", "scatter", "sort",
                "cumsum", "unique", "masked_scatter")


def _unlowerable(graph):
    return any(node.op == "call_function" and
               any(name in str(node.target) for name in _UNLOWERABLE)
               for node in graph.nodes)


def _probe(optimizer, group, params, state_sets, candidates):
    """{key: "tensor"}: the candidates that `optimizer`'s step, traced alone
    on `params` (with each of `state_sets`: name -> tensor per parameter),
    takes as 0-d tensors; CompileError when the step cannot be traced at
    all."""
    from torch.fx.experimental.proxy_tensor import make_fx
    gen = torch.Generator().manual_seed(3)
    grads = [torch.randn(p.shape, generator=gen, dtype=p.dtype)
             for p in params]

    def attempt(modes):
        return [attempt_with(modes, states) for states in state_sets]

    def attempt_with(modes, states):
        keys = list(modes)

        def run(*flat):
            it = iter(flat)
            qs = [next(it) for _ in params]
            for q, g in zip(qs, [next(it) for _ in params]):
                q.grad = g
            sts = [{k: widened(next(it), q) for k in s}
                   for s, q in zip(states, qs)]
            values = [(key, next(it)) for key in keys]
            shadow = _shadow(optimizer, [(_with_values(group, values), qs)])
            for q, s in zip(qs, sts):
                shadow.state[q] = s
            _run(shadow)
            return qs
        flat = [p.detach().clone().cpu() for p in params] + grads + \
            [t.clone() for s in states for t in s.values()] + \
            [torch.tensor(float(_value(group, k)), dtype=torch.float64)
             for k in keys]
        with _compiling():
            return make_fx(run)(*flat)

    cls = type(optimizer)
    try:
        if cls not in _CAPTURABLE and "capturable" in group:
            _CAPTURABLE[cls] = False
            try:
                if any(_unlowerable(gm.graph) for gm in attempt({})):
                    _CAPTURABLE[cls] = True
            except Exception:
                _CAPTURABLE[cls] = True
        attempt({})
    except Exception as error:
        why = _first_line(error)
        hint = ""
        if "_local_scalar_dense" in why or "data-dependent" in why or \
                "item()" in why:
            hint = (" (it reads a tensor's value in Python: a branch on "
                    "it, `if x > 0:` or bool(), int(t) or math on it, "
                    "which a step traced once for every call cannot; "
                    ".item(), float(t), max() and min() are traced)")
        raise CompileError(
            f"{_where(optimizer, error)}: error: "
            f"{type(optimizer).__name__}.step() cannot be traced{hint}: "
            f"{type(error).__name__}: {why}",
            code="optimizer-not-traceable") from None

    def works(modes):
        try:
            attempt(modes)
            return True
        except Exception:
            return False

    every = {k: "tensor" for k in candidates}
    if works(every):
        modes = every
    else:
        modes = {}
        for k in candidates:
            if works({**modes, k: "tensor"}):
                modes[k] = "tensor"
    if _CAPTURABLE.get(cls) is False and any(
            _unlowerable(gm.graph) for gm in attempt(modes)):
        _CAPTURABLE[cls] = True  # and the arguments found again for it
        return _probe(optimizer, group, params, state_sets, candidates)
    return modes


def group_modes(optimizer, index, params, names):
    """The step arguments of group `index` (see _probe), memoized by class,
    baked-in settings and the parameters' shapes and state names (`names`,
    per parameter of `params`: the members of the group that are trained)."""
    group = optimizer.param_groups[index]
    candidates = _candidates(group)
    sig = tuple((tuple(p.shape), n) for p, n in zip(params, names))
    for constants, s, modes in _PLANS[type(optimizer)]:
        if s == sig and set(modes) <= set(candidates) and \
                constants == _constants(group, modes):
            return modes
    if not params:
        return {}
    # One representative per parameter rank and state (a cheaper trace).
    chosen, seen = [], set()
    for p, n in zip(params, names):
        if (p.dim(), n) not in seen:
            seen.add((p.dim(), n))
            chosen.append((p, n))
    lays = layouts(optimizer, [p for p, _ in chosen])
    # Zeros at the shapes a step leaves (the values do not enter a trace).
    states = [{k: torch.zeros(lay.shapes[lay.names.index(k)],
                              dtype=lay.dtypes[lay.names.index(k)])
               for k in n if k in lay.names} for (p, n), lay in
              zip(chosen, lays)]
    state_sets = [states]
    if any(lay.from_gradient for lay in lays):  # its first step as well
        state_sets.append([{} for _ in chosen])
    modes = _probe(optimizer, group, [p for p, _ in chosen], state_sets,
                   candidates)
    _PLANS[type(optimizer)].append((_constants(group, modes), sig, modes))
    return modes


def signature(optimizer):
    """What a trace bakes in of `optimizer` (its cache key): the class and,
    per group, the baked-in settings, the settings that are step arguments,
    and the names of the state tensors each parameter (that requires grad)
    passes."""
    refuse_unsupported(optimizer)
    out = []
    for index, group in enumerate(optimizer.param_groups):
        params = [p for p in group["params"] if p.requires_grad]
        lays = layouts(optimizer, params) if any(
            not optimizer.state.get(p) for p in params) else [None] * len(
                params)
        names = [arg_names(optimizer, p, lay) for p, lay in
                 zip(params, lays)]
        modes = group_modes(optimizer, index, params, names)
        out.append((_constants(group, modes), tuple(sorted(modes.items())),
                    tuple(names)))
    return (type(optimizer).__module__, type(optimizer).__qualname__,
            tuple(out))
