"""Compiling the imported step with ga-mlir and calling it on tensors."""

import ctypes
import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading

import torch

from .. import PipelineError, library_path, run_pipeline
from ._common import LLVM_BIN, CompileError
from ._export import _flat_arguments, export_train_step


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


def _lowering_options(options):
    """The --ga-lower-to-cpu options of the compiled step, as a list."""
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
        if value is None or key in _ACCUMULATE_OPTIONS:
            continue
        if key in _LOWER_OPTIONS:
            low.append(f"{_LOWER_OPTIONS[key]}={_option_text(value)}")
        else:
            raise TypeError(f"compile_train_step: unknown option {key!r}")
    return low


def _mark(batch_args):
    return ("ga-mark-batch-args{batch-args=" +
            ",".join(f"{i}:{d}" for i, d in batch_args) + "}")


def _pipeline(micro_batches, batch_args, options):
    acc = [f"micro-batches={micro_batches}",
           "batch-args=" + ",".join(f"{i}:{d}" for i, d in batch_args)]
    rewrite = _rewrite_options(options)
    if rewrite:
        acc.append(rewrite)
    return (f"builtin.module(ga-accumulate{{{' '.join(acc)}}},"
            f"ga-lower-to-cpu{{{' '.join(_lowering_options(options))}}})")


def _memory_report(ir, micro_batches, batch_args, options):
    """--ga-memory-report of the step as compiled: its row (a dict) for N =
    `micro_batches`, with the CPU options of the library."""
    report = [f"sweep={micro_batches}", "format=json"]
    rewrite = _rewrite_options(options)
    if rewrite:
        report.append(f"accumulate={{{rewrite}}}")
    report.append(f"cpu={{{' '.join(_lowering_options(options))}}}")
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "report.json")
        try:
            run_pipeline(ir, f"builtin.module({_mark(batch_args)},"
                         f"ga-memory-report{{{' '.join(report)} "
                         f"output={out}}})")
        except PipelineError as error:
            raise CompileError("--ga-memory-report failed:\n" + "\n".join(
                d.rstrip("\n") for d in error.diagnostics)) from None
        with open(out) as f:
            return json.load(f)[0]


def _rewrite_options(options):
    """The --ga-accumulate options among `options` that shape the rewrite,
    as the text of a pass option."""
    return " ".join(f"{_ACCUMULATE_OPTIONS[k]}={_option_text(v)}"
                    for k, v in sorted(options.items())
                    if k in _ACCUMULATE_OPTIONS and v is not None)


def _budget_text(max_memory):
    """max_memory as --ga-accumulate takes it: bytes (an int) or a string such
    as "256MiB" (checked by the pass)."""
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, str)):
        raise TypeError("max_memory: a number of bytes or a string such as "
                        f"'256MiB', not {max_memory!r}")
    return str(max_memory).strip()


def _choose_micro_batches(ir, batch_args, micro_batches, micro_batch_size,
                          max_memory, options):
    """N as --ga-choose-micro-batches chooses it (what --ga-accumulate does
    with `micro-batch-size` or `max-memory`): the smallest N whose static
    peak (--ga-memory-report, default --ga-lower-to-cpu bufferization) fits
    `max_memory`, or ceil(B / micro_batch_size). Contradictory options and a
    budget that no N fits raise CompileError with the pass's diagnostics.
    Cached like the libraries."""
    choose = []
    if micro_batches is not None:
        choose.append(f"micro-batches={micro_batches}")
    if micro_batch_size is not None:
        choose.append(f"micro-batch-size={micro_batch_size}")
    if max_memory is not None:
        choose.append(f"max-memory={_budget_text(max_memory)}")
    rewrite = _rewrite_options(options)
    if rewrite:
        choose.append(f"accumulate={{{rewrite}}}")
    pipeline = (f"builtin.module({_mark(batch_args)},"
                f"ga-choose-micro-batches{{{' '.join(choose)}}})")
    key = hashlib.sha256("\0".join(
        [ir, pipeline, os.path.realpath(library_path()),
         str(os.path.getmtime(library_path()))]).encode()).hexdigest()[:24]
    cached = os.path.join(_cache_dir(), f"choice-{key}.txt")
    if os.path.exists(cached):
        with open(cached) as f:
            return int(f.read())
    try:
        chosen = run_pipeline(ir, pipeline)
    except PipelineError as error:
        raise CompileError(
            "ga-mlir could not choose the number of micro-batches:\n" +
            "\n".join(d.rstrip("\n") for d in error.diagnostics)) from None
    found = re.search(r"ga\.micro_batches = (\d+)", chosen)
    if not found:
        raise CompileError("ga-choose-micro-batches recorded no number of "
                           "micro-batches on @train_step")
    n = int(found.group(1))
    with open(cached + f".{os.getpid()}", "w") as f:
        f.write(str(n))
    os.replace(cached + f".{os.getpid()}", cached)
    return n


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
                 max_memory=None, max_grad_norm=None, target="cpu",
                 batch_dims=None, indexing="one-hot", mcpu="native",
                 **options):
        if target != "cpu":
            raise CompileError(f"target={target!r}: only 'cpu' is supported")
        if micro_batches is None and micro_batch_size is None and \
                max_memory is None:
            raise TypeError("pass one of micro_batches=, micro_batch_size= "
                            "and max_memory=")
        if max_memory is not None:
            _budget_text(max_memory)
        for key in options:
            if key not in _ACCUMULATE_OPTIONS and key not in _LOWER_OPTIONS:
                raise TypeError(f"compile_train_step: unknown option {key!r}")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.micro_batches, self.micro_batch_size = micro_batches, \
            micro_batch_size
        self.max_memory = max_memory
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
        ir, spec = export_train_step(
            self.model, self.loss_fn, self.optimizer, inputs,
            self.max_grad_norm, self.indexing)
        first_input = spec.arg_count() - self.num_inputs
        batch_args = [(first_input + i, d)
                      for i, d in enumerate(self.batch_dims)]
        given = [self.micro_batches, self.micro_batch_size, self.max_memory]
        if sum(v is not None for v in given) == 1 and \
                self.max_memory is None:
            n = self.micro_batches or -(-batch // self.micro_batch_size)
        else:
            # A budget, or several options (contradictory: the pass says
            # so, located).
            n = _choose_micro_batches(ir, batch_args, *given, self.options)
        if not 1 <= n <= batch:
            raise CompileError(f"{n} micro-batches for a batch of {batch}")
        pipeline = _pipeline(n, batch_args, self.options)
        lib = _compile_library(ir, pipeline, self.mcpu,
                               self.options.get("blas", True))
        results = [(p.shape, p.dtype) for p in spec.params]
        for i, p in enumerate(spec.params):
            results += [(p.shape, p.dtype)] * spec.num_states[i]
        results.append(((), torch.float32))
        variant = _Variant(lib, spec, results)
        variant.spec, variant.micro_batches = spec, n
        variant.ir, variant.batch_args = ir, batch_args
        self._variants[key] = variant
        return variant

    def chosen_micro_batches(self, *inputs):
        """N of the step for `inputs` (default: the example inputs' shapes),
        as given, or as chosen from micro_batch_size or max_memory."""
        if not inputs:
            return next(iter(self._variants.values())).micro_batches
        return self._variant(tuple(t.contiguous() for t in
                                   inputs)).micro_batches

    def memory_report(self, *inputs):
        """The static memory report (--ga-memory-report, as a dict: bytes of
        parameters, optimizer_state, inputs, accumulators, results,
        temporaries, static, total_peak, ...) of the step for `inputs`
        (default: the example inputs' shapes), bufferized as the library
        is."""
        v = self._variant(tuple(t.contiguous() for t in inputs)) if inputs \
            else next(iter(self._variants.values()))
        return _memory_report(v.ir, v.micro_batches, v.batch_args,
                              self.options)

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
                       micro_batches=None, micro_batch_size=None,
                       max_memory=None, **kwargs):
    """Compiles `loss_fn(model, *inputs).backward(); optimizer.step();
    optimizer.zero_grad()` with gradient accumulation over micro-batches.

    model: a torch.nn.Module (float32 parameters on the CPU).
    loss_fn(model, *inputs): the scalar loss of the whole batch.
    optimizer: torch.optim.SGD (momentum, dampening, nesterov, weight decay,
        maximize), Adam or AdamW over (some of) the model's parameters.
    example_inputs: the per-sample inputs of one batch (tensors).
    micro_batches=N, or micro_batch_size=M (N = ceil(B / M)), or
        max_memory=bytes (an int, or a string such as "256MiB", "1.5GiB"):
        the smallest N whose static peak (--ga-memory-report of the default
        CPU bufferization) fits, as --ga-accumulate="max-memory=..." chooses
        it; CompileError with the located message when no N fits. Giving
        more than one of the three is an error (CompileError, the message of
        --ga-choose-micro-batches). `step.chosen_micro_batches()` says N.
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
                             micro_batch_size=micro_batch_size,
                             max_memory=max_memory, **kwargs)
