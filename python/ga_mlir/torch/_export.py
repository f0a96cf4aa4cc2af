"""Tracing a training step into one function and importing it with
torch-mlir."""

import contextlib
import traceback
import unittest.mock

import torch

from . import (_checkpoint, _functions, _guards, _moe, _philox, _recurrence,
               _rolled)
from ._batchnorm import (_batch_norm_buffers, _batch_norm_check,
                         _explicit_batch_norm)
from ._common import CompileError
from ._convolutions import ConvolutionForms
from ._decompositions import _decomposition_table, one_hot
from ._domains import mark_domains
from ._masked import MaskedRows
from ._locations import (UNLOCATED, _innermost_user_line,
                         current_user_line, kept_frame, locate_graph,
                         preserve_backward_locations, traceback_user_line)
from ._metrics import Metrics, split_result
from ._modules import batch_first_forms
from ._layout import flat_arguments as _flat_arguments
from ._import import _import_to_linalg, _refuse_tm_tensor_ops
from ._gathers import rewrite_per_sample_indexing
from ._rewrites import rewrite_graph
from ._spec import _Spec
from ._writes import refuse_argument_writes, refuse_buffer_writes


class _LossModule(torch.nn.Module):
    """loss_fn(model, *inputs) as a module, so that torch.func.functional_call
    substitutes the traced parameters wherever loss_fn uses the model."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *inputs):
        return self.loss_fn(self.model, *inputs)


@contextlib.contextmanager
def _tracing(model, exact_statistics):
    """What tracing runs the forward under (the draws' probe too, so that
    it sees the same code paths): BatchNorm's check, PyTorch's compiling
    state (torch.compiler.is_compiling() and is_exporting() are True, as in
    torch.export's non-strict tracing: libraries such as transformers then
    take their traceable paths instead of reading tensor values in Python),
    scaled_dot_product_attention as PyTorch's fused CPU pair (forward
    with its logsumexp, backward; _attention) where it applies, else its
    math form (dropout), F.one_hot as a
    comparison, grouped and transposed convolutions in forms that torch-mlir
    lowers (_convolutions), selections by a boolean mask as masked rows
    (_masked), the grouped products of mixture-of-experts layers as
    ga_mlir::grouped_mm (_moe), the model's activation checkpoints as
    plain calls (_checkpoint)."""
    from torch._export.utils import _compiling_state_context
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with _batch_norm_check(model, exact_statistics), \
            _checkpoint.substituted(), \
            _compiling_state_context(), \
            sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]), \
            unittest.mock.patch.object(torch.nn.functional, "one_hot",
                                       one_hot), \
            ConvolutionForms(), MaskedRows(), _moe.ExpertProducts():
        yield


def _draw_layouts(model, loss_fn, inputs, batch_dims, exact_statistics):
    """The layouts (_philox._Draw) of the random numbers that the forward
    draws, in order: the forward runs eagerly as it is traced, at the batch
    size B and at B - 1 (the inputs cut along their batch dimensions), and
    the dimension of each draw that scales with the batch holds the
    samples. Draws that the compiled step cannot make are left out (the
    trace keeps them, and they are refused there, located)."""
    def draws(ins):
        def run():
            with _tracing(model, exact_statistics), \
                    _explicit_batch_norm(model, {}), \
                    batch_first_forms(model), torch.no_grad():
                loss_fn(model, *ins)
        return [d for d in _philox.record_draws(run)
                if d[0] in _philox.SUPPORTED]

    try:
        full = draws(inputs)
    except CompileError:
        raise
    except Exception as error:
        where, why = _user_failure(error)
        raise CompileError(
            f"{where}: error: the forward fails when run as it is traced "
            "(under PyTorch's compiling state, with the frontend's forms of "
            f"its layers): {why}",
            code="trace-failed") from None
    if not full:
        return []
    batch = inputs[0].shape[batch_dims[0]]
    smaller = None
    if batch > 1:
        cut = [t.narrow(d, 0, batch - 1) for t, d in zip(inputs, batch_dims)]
        try:
            smaller = draws(cut)
        except Exception:  # the model takes the batch size as given
            smaller = None
    layouts, bad = _philox.draw_layouts(full, smaller, batch, batch - 1)
    if layouts is None:
        name, shape, where = full[bad]
        raise CompileError(
            f"{where}: error: {name} draws random numbers of shape "
            f"{list(shape)} whose batch dimension (the samples, {batch} of "
            "them) cannot be told apart from the others, and the compiled "
            "step draws each sample's numbers from its index in the batch: "
            "draw them for a tensor whose batch dimension has its own size, "
            "or pass the mask as an input",
            code="random-draw-unsupported")
    return layouts


def _probe(model, loss_fn, inputs):
    """One eager forward and backward: the names of the parameters that the
    loss does not depend on (they get no gradient, None, so torch.optim
    leaves them and their state alone; the compiled step does too) and of
    the buffers that the forward updates in place (BatchNorm's running
    statistics in training mode; they become results of the step), and
    the metrics loss_fn returns beside the loss (_metrics), and the
    model's own autograd.Functions (_functions), and how many activation
    checkpoints the forward calls (read as plain calls: _checkpoint). The
    random number generator's state and the buffers are restored."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    buffers = list(model.named_buffers())
    saved = [(b, b._version, b.detach().clone()) for _, b in buffers]
    try:
        with torch.random.fork_rng(devices=[]), torch.enable_grad(), \
                _checkpoint.substituted(), _checkpoint.counting() as calls:
            loss, leaves, structure = split_result(
                loss_fn(model, *inputs), loss_fn)
            functions = _functions.custom_functions(loss)
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
    return ({n for (n, _), g in zip(named, grads) if g is None}, mutated,
            Metrics.of(leaves, structure), functions, calls[0])


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
        hyper = [next(it) for _ in range(H)]
        inputs = list(it)
        if spec.num_random_args():  # the samples' indices and the seed
            inputs = inputs[:-spec.num_random_args()]
        _guards.note_inputs(inputs)  # what guards on sizes may read
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
                loss, metrics, _ = split_result(torch.func.functional_call(
                    wrapper, values, tuple(inputs)), loss_fn)
            preserve_backward_locations(loss)
            return loss, ([updates[n] for n in spec.mutated_buffers],
                          [m.detach() for m in metrics])

        (grads, (loss, (new_buffers, metrics))) = torch.func.grad_and_value(
            loss_of, has_aux=True)(params)
        grads = list(grads)
        if max_grad_norm is not None:
            # torch.nn.utils.clip_grad_norm_ (foreach, norm_type 2).
            norms = [torch.linalg.vector_norm(g, 2.0) for g in grads]
            total = torch.linalg.vector_norm(torch.stack(norms), 2.0)
            coef = torch.clamp(max_grad_norm / (total + 1e-6), max=1.0)
            grads = [g * coef for g in grads]
        per_param, k = [], 0
        for n in spec.num_states:
            per_param.append(states[k:k + n])
            k += n
        new_params, new_states = spec.opt.traced_step(params, grads,
                                                      per_param, hyper)
        new_states = [t for st in new_states for t in st]
        return (*new_params, *new_states, *new_buffers, loss, *metrics)

    return step


def _user_failure(error):
    """(the user's innermost line in `error`'s traceback, or UNLOCATED;
    "<exception type>: <first line of its message>")."""
    where = traceback_user_line(error.__traceback__)
    reason = str(error).strip().splitlines()
    return (where or UNLOCATED,
            f"{type(error).__name__}: {reason[0] if reason else ''}")


@contextlib.contextmanager
def _shared_fake_mode():
    """make_fx (tracing with real tensors) records each node's value as a
    fake tensor of its shape, made under a FakeTensorMode that it creates
    anew for every node (proxy_tensor.extract_val), about a millisecond
    each: here one mode serves the whole trace. The recorded values are the
    same (empty fake tensors of the same sizes, strides, dtype, device)."""
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import FakeTensorMode, is_fake
    from torch.fx.experimental import proxy_tensor
    original = getattr(proxy_tensor, "extract_val", None)
    if original is None:  # another torch: its own way
        yield
        return
    mode = FakeTensorMode(allow_fallback_kernels=True)

    def extract_val(val, include_real=False):
        if isinstance(val, torch.Tensor) and not is_fake(val) and \
                not val.is_sparse and detect_fake_mode(val) is None:
            with mode:
                return torch.empty_strided(val.shape, val.stride(),
                                           device=val.device, dtype=val.dtype)
        return original(val, include_real)

    with unittest.mock.patch.object(proxy_tensor, "extract_val",
                                    extract_val):
        yield


def _trace(fn, flat, table, model, exact_statistics, autograd_functions=0):
    """The step `fn` traced by make_fx on `flat`, functionalized, with
    every frame of each node's stack trace (make_fx keeps only the frames
    of functions named `forward`, which drops the loss function and
    library helpers; locate_graph keeps the user's). A failure to trace is
    a CompileError at the user's innermost line, with PyTorch's reason.
    autograd_functions: how many autograd.Functions the forward calls (the
    grouped products, _moe.counting; the model's own, _functions), for
    which functionalize has no rule."""
    from torch.fx.experimental.proxy_tensor import make_fx
    import torch.utils._traceback as captured

    def kept_summary(frames, skip):
        # CapturedTraceback.summary() reads the source line of every frame
        # of every node (~45 per node: 190 000 linecache lookups in the
        # bidirectional GRU's trace); only the kept frames are formatted.
        return traceback.StackSummary.from_list([
            traceback.FrameSummary(f["filename"], f["line"], f["name"])
            for f in reversed(frames[skip:])
            if kept_frame(f["filename"], f["name"])])

    with _tracing(model, exact_statistics), \
            torch.fx.traceback.preserve_node_meta(), \
            unittest.mock.patch.object(
                torch.fx.proxy.TracerBase, "_filter_traceback_frames",
                lambda self, summary: traceback.StackSummary.from_list(
                    [f for f in summary if kept_frame(f.filename, f.name)])), \
            unittest.mock.patch.object(captured, "_extract_symbolized_tb",
                                       kept_summary), \
            _shared_fake_mode():
        try:
            if not _recurrence.has_time_loops(model) and \
                    not autograd_functions:
                return make_fx(torch.func.functionalize(fn),
                               decomposition_table=table,
                               record_stack_traces=True)(*flat)
            # functionalize has no rule for the autograd.Function of the
            # time loops (_recurrence), of the grouped products (_moe) and
            # the model's own (_functions):
            # the step is traced first as it
            # runs, then its graph (plain ops and the loops' custom ops)
            # functionalized.
            # (The replay through an Interpreter keeps each node's stack.)
            graph = make_fx(fn, decomposition_table=table,
                            record_stack_traces=True)(*flat)
            return make_fx(torch.func.functionalize(
                lambda *args: torch.fx.Interpreter(graph).run(*args)),
                decomposition_table=table, record_stack_traces=True)(*flat)
        except CompileError:
            raise
        except Exception as error:
            # Data-dependent control flow, an op without a trace, ...
            where, why = _user_failure(error)
            raise CompileError(
                f"{where}: error: PyTorch could not trace the step"
                f"{_trace_hint(str(error))} ({why})",
                code="trace-failed") from None


def _refuse_random_ops(graph):
    """Refuses, at the user's line, a draw of random numbers that the
    decomposition table did not replace by a per-sample draw."""
    for node in graph.nodes:
        if node.op == "call_function" and _philox.is_random(node.target):
            name = str(node.target).split(".")[1] if "." in str(
                node.target) else str(node.target)
            where = _innermost_user_line(node.meta.get("stack_trace"))
            what = ("nn.RReLU (F.rrelu) in training mode"
                    if name.startswith("rrelu_with_noise") else
                    f"torch.{name.rstrip('_')}")
            raise CompileError(
                f"{where or UNLOCATED}: error: the step draws random "
                f"numbers with {what}, which the "
                "compiled step cannot draw (it draws those of Dropout, "
                "torch.bernoulli, torch.rand, uniform_, exponential_, "
                "torch.randn, normal_ and torch.randint, by sample): pass "
                "the numbers as an input of the step",
                code="random-draw-unsupported")


def export_train_step(model, loss_fn, optimizer, example_inputs,
                      max_grad_norm=None, indexing="one-hot",
                      exact_statistics=False, batch_dims=None,
                      guard_outcomes=None):
    """Traces the training step and imports it with torch-mlir. Returns
    (MLIR text with locations, _Spec). The function is `@train_step`; its
    arguments: trainable parameters, frozen parameters, buffers, optimizer
    states, 0-d hyper-parameters (per group), then the inputs; its
    results: new parameters, new states, new values of the buffers that the
    forward updates (spec.mutated_buffers), loss, metric tensors
    (spec.metrics). BatchNorm in training mode
    needs `exact_statistics` (the step is then rewritten with
    recompute-statistics). A step that draws random numbers (Dropout in
    training mode) takes two more arguments after the inputs: arange(B),
    per-sample, and the seed (see _philox). spec.guards: the branches on
    sizes of selections that the trace took (_guards; `guard_outcomes`,
    their outcomes on the example inputs, only keys the trace cache)."""
    with _batch_norm_check(model, exact_statistics), \
            _philox.host_generators_kept():
        unused, mutated, metrics, functions, checkpoints = _probe(
            model, loss_fn, example_inputs)
    others = sorted(mutated - _batch_norm_buffers(model))
    if others:
        refuse_buffer_writes(model, loss_fn, example_inputs, others)
    batch_dims = list(batch_dims or [0] * len(example_inputs))
    with _moe.counting() as grouped_products:
        layouts = _draw_layouts(model, loss_fn, example_inputs, batch_dims,
                                exact_statistics)
    spec = _Spec(model, optimizer, len(example_inputs), unused, mutated,
                 batch_dims, layouts)
    spec.batch = example_inputs[0].shape[batch_dims[0]] if \
        example_inputs else None
    spec.metrics = metrics
    spec.user_checkpoints = checkpoints
    if not spec.params:
        raise CompileError("the optimizer has no trainable parameter of the "
                           "model",
                           code="invalid-argument")
    for p in spec.params:
        if p.dtype != torch.float32 or p.device.type != "cpu":
            raise CompileError("parameters must be float32 CPU tensors",
                               code="tensor-placement")
    fn = _make_step_function(model, loss_fn, spec, max_grad_norm)
    flat = _flat_arguments(spec, model, example_inputs, for_trace=True)
    table = _decomposition_table(indexing)
    draws = None
    if layouts:
        # The placeholders of the samples' indices and of the seed.
        draws = _philox.RandomDraws(flat[-1], flat[-2], layouts,
                                    lambda k: current_user_line())
        table.update(draws.table())
    with _guards.recording(example_inputs) as guards, \
            _functions.traceable(functions):
        gm = _trace(fn, flat, table, model, exact_statistics,
                    grouped_products[0] + len(functions))
    spec.guards = list(guards)
    locate_graph(gm.graph)
    _moe.refuse_untraced(gm.graph)
    spec.grouped_lines = _moe.grouped_lines(gm.graph)
    refuse_argument_writes(gm.graph, flat, model)
    _refuse_data_dependent_sizes(gm.graph)
    rewrite_graph(gm)
    rewrite_per_sample_indexing(gm)
    _refuse_random_ops(gm.graph)
    if draws is not None and draws.count != len(layouts):
        raise CompileError(
            f"the forward drew random numbers {len(layouts)} times when run "
            f"eagerly but {draws.count} times when traced: the compiled step "
            "cannot reproduce its draws",
            code="random-draw-unsupported")
    if _rolled.has_loops(gm):
        module = _rolled.import_rolled(
            gm, table, lambda graphs: _import_to_linalg(gm, graphs))
    else:
        module = _import_to_linalg(gm)
    spec.metrics.distinct_results(module, len(spec.params) + sum(
        spec.num_states) + len(spec.mutated_buffers))
    mark_domains(module, spec)
    text = module.operation.get_asm(enable_debug_info=True)
    _refuse_tm_tensor_ops(module)
    return text, spec


_DATA_DEPENDENT_WORDS = (
    "a size on this line depends on the data (torch.nonzero, x[mask] with a "
    "boolean mask, torch.unique, repeat_interleave by a tensor): the "
    "compiled step needs sizes known when it is traced; keep the shape "
    "fixed (torch.where with the mask, or multiply by it)")

# Why PyTorch could not trace a step, in words that say what to do: (a part
# of PyTorch's message, the words).
_TRACE_HINTS = [
    ("_local_scalar_dense",
     "this line reads the value of a tensor in Python (if x.sum() > 0:, "
     ".item(), int(x), a loop or a size that depends on a tensor's values), "
     "which a traced step cannot: the step is traced once for every batch; "
     "use torch.where (or clamp, masks) instead of a Python branch on a "
     "value, or pass the value as a Python number"),
    ("data-dependent", _DATA_DEPENDENT_WORDS),
]


# Operations whose result's size depends on the values of their input: the
# trace records the size of the example batch's result, which another batch
# does not have.
_DATA_DEPENDENT_SIZES = {"nonzero", "argwhere", "masked_select", "_unique",
                         "_unique2", "unique_dim", "unique_consecutive"}
_DATA_DEPENDENT_OVERLOADS = {"aten.repeat_interleave.Tensor",
                             "aten.repeat_interleave.self_Tensor"}


def _refuse_data_dependent_sizes(graph):
    """CompileError at the model's line for an operation of `graph` whose
    result's size depends on the data (x[mask] with a boolean mask
    included): the traced size is the example batch's only."""
    for node in graph.nodes:
        target = str(node.target)
        if node.op != "call_function" or not target.startswith("aten."):
            continue
        name = target.split(".")[1]
        indices = node.args[1] if name == "index" and len(node.args) > 1 \
            else ()
        masks = isinstance(indices, (list, tuple)) and any(
            getattr(getattr(i, "meta", {}).get("val"), "dtype", None) ==
            torch.bool for i in indices)
        if name in _DATA_DEPENDENT_SIZES or masks or \
                target in _DATA_DEPENDENT_OVERLOADS:
            where = _innermost_user_line(node.meta.get("stack_trace"))
            raise CompileError(
                f"{where or UNLOCATED}: error: {_DATA_DEPENDENT_WORDS} "
                f"(torch.ops.{target}"
                f"{' with a boolean mask' if masks else ''})",
                code="data-dependent-size")


def _trace_hint(message):
    """": <what to do>" for a known cause of a trace failure, or ""."""
    for part, words in _TRACE_HINTS:
        if part in message:
            return ": " + words
    return ""
