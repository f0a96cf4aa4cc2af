"""The options of compile_train_step as ga-mlir's compiler takes them: for
the CPU, the typed options of the driver (ga_mlir.driver, one call from the
step to its lowered form); for the other paths (CUDA, data-parallel steps)
still the pass pipelines (--ga-accumulate, --ga-lower-to-cpu,
--ga-lower-to-nvvm). Checked in Python's words; the compiler's diagnostics
explained in PyTorch's words by their codes."""

from .. import PipelineError, driver, run_pipeline
from ._common import CompileError
from ._locations import explain, first_code


# ga-opt options that compile_train_step passes through (Python spelling ->
# pipeline, option).
_ACCUMULATE_OPTIONS = {
    "accumulator_type": "accumulator-type",
    "allow_ghost_batch": "allow-ghost-batch",
    "recompute_statistics": "recompute-statistics",
    "fuse": "fuse",
    "recompute": "recompute",
}
_LOWER_OPTIONS = {
    "blas": "blas",
    "vector_width": "vector-width",
    "fuse_elementwise": "fuse-elementwise",
    "static_temporaries": "static-temporaries",
    "share_buffers": "share-buffers",
    "openmp": "openmp",
    "num_threads": "num-threads",
    "min_parallel_work": "min-parallel-work",
    # Speed over bit-compatibility with libm and sequential sums (both on
    # by default in the pipeline; docs/CPU.md, "Normalisations and losses").
    "split_row_reductions": "split-row-reductions",
    "approximate_math": "approximate-math",
}
# --ga-lower-to-nvvm options for target="cuda" (the pipeline's defaults:
# products on cuBLASLt, the micro-batch body as a CUDA graph).
_NVVM_OPTIONS = {
    "cublas": "cublas",
    "cuda_graphs": "cuda-graphs",
    "fma": "fma",
    "block_size": "block-size",
    "fuse_elementwise": "fuse-elementwise",
}


# The switches and counts among the options (the passes' bool and unsigned
# options): checked here, so that a wrong value is refused in Python's
# words rather than as a pass pipeline that does not parse.
_SWITCHES = {"allow_ghost_batch", "recompute_statistics", "fuse", "blas",
             "fuse_elementwise", "static_temporaries", "openmp", "cublas",
             "cuda_graphs", "fma", "split_row_reductions",
             "approximate_math", "share_buffers"}
_COUNTS = {"vector_width", "num_threads", "min_parallel_work", "block_size"}


# The values of the choices among the options.
_CHOICES = {"recompute": ("none", "pointwise", "attention", "products",
                          "layers")}


def _option_text(value, key=None):
    """An option's value as a pass option takes it; TypeError for a switch
    that is not True or False, or a count that is not an int >= 0;
    ValueError for a choice that is not one of its values."""
    if key in _CHOICES and value not in _CHOICES[key]:
        raise ValueError(f"compile_train_step: {key} must be one of " +
                         ", ".join(repr(c) for c in _CHOICES[key]) +
                         f", got {value!r}")
    if key in _SWITCHES and not isinstance(value, bool):
        raise TypeError(f"compile_train_step: {key} must be True or False, "
                        f"got {value!r}")
    if key in _COUNTS and (isinstance(value, bool) or not isinstance(
            value, int) or value < 0):
        raise TypeError(f"compile_train_step: {key} must be an int >= 0, "
                        f"got {value!r}")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _nvvm_options(options):
    """The --ga-lower-to-nvvm options of a target="cuda" step, as a list."""
    low = []
    for key, value in sorted(options.items()):
        if value is None or key in _ACCUMULATE_OPTIONS:
            continue
        if key not in _NVVM_OPTIONS:
            raise TypeError(f"compile_train_step: option {key!r} is not one "
                            "of target='cuda' (" +
                            ", ".join(sorted(_NVVM_OPTIONS)) + ")")
        low.append(f"{_NVVM_OPTIONS[key]}={_option_text(value, key)}")
    return low


def _lowering_options(options):
    """The --ga-lower-to-cpu options of the compiled step, as a list."""
    low = ["c-interface=1", "out-params=1"]
    # fuse-elementwise: on since --ga-isolate-library-products keeps the
    # matrix products (and the reshapes around them) out of the fusion, so
    # every product stays a CBLAS call (GPT-style, N = 4: 2240 -> 1655 ms,
    # bench/torch_accumulation.py, docs/CPU.md).
    defaults = {"blas": True, "static_temporaries": True,
                "fuse_elementwise": True}
    merged = dict(defaults)
    merged.update(options)
    # OpenMP on PyTorch's thread count unless told otherwise: a known count
    # also splits the large products over those threads (one pool, see
    # _call._one_blas_thread_under_openmp).
    if merged.get("openmp") and merged.get("num_threads") is None:
        import torch
        merged["num_threads"] = torch.get_num_threads()
    for key, value in sorted(merged.items()):
        if value is None or key in _ACCUMULATE_OPTIONS:
            continue
        if key in _LOWER_OPTIONS:
            low.append(f"{_LOWER_OPTIONS[key]}={_option_text(value, key)}")
        else:
            raise TypeError(f"compile_train_step: unknown option {key!r}")
    return low


def _mark(batch_args):
    return ("ga-mark-batch-args{batch-args=" +
            ",".join(f"{i}:{d}" for i, d in batch_args) + "}")


class StepPipelines(tuple):
    """What _pipelines returns: the pair of pipeline texts (for the cache's
    key, and the paths not yet on the driver), and the typed step it was
    made from (`micro_batches`, `batch_args`, `options`, `target`), which
    compile_step hands to the driver. A path that edits the texts (the
    data-parallel steps) makes a plain tuple, which is compiled by its
    texts."""

    def __new__(cls, texts, micro_batches, batch_args, options, target):
        self = super().__new__(cls, texts)
        self.micro_batches, self.batch_args = micro_batches, batch_args
        self.options, self.target = options, target
        return self


def _pipelines(micro_batches, batch_args, options, target="cpu"):
    """The --ga-accumulate pipeline, and the lowering of its output (for
    "cuda": the --ga-lower-to-nvvm options that ga-compile adds to its
    own), as a StepPipelines."""
    acc = [f"micro-batches={micro_batches}",
           "batch-args=" + ",".join(f"{i}:{d}" for i, d in batch_args)]
    rewrite = _rewrite_options(options)
    if rewrite:
        acc.append(rewrite)
    if target == "cuda":
        lowering = " ".join(_nvvm_options(options))
    else:
        lowering = f"ga-lower-to-cpu{{{' '.join(_lowering_options(options))}}}"
    return StepPipelines(
        (f"builtin.module(ga-accumulate{{{' '.join(acc)}}})", lowering),
        micro_batches, tuple(batch_args), dict(options), target)


def _driver_options(micro_batches, batch_args, options, in_place=()):
    """compile_train_step's options as the driver's (ga_mlir.driver
    .CompileOptions) for the CPU library: the lowering's defaults of the
    library (c_interface, out_params, blas, static_temporaries,
    fuse_elementwise; with openmp, PyTorch's thread count), each value
    checked as _option_text checks it."""
    cpu = {"c_interface": True, "out_params": True, "blas": True,
           "static_temporaries": True, "fuse_elementwise": True}
    rewrite = {}
    for key, value in sorted(options.items()):
        if value is None:
            continue
        _option_text(value, key)
        if key in _ACCUMULATE_OPTIONS:
            rewrite[key] = value
        elif key in _LOWER_OPTIONS:
            cpu[key] = value
        else:
            raise TypeError(f"compile_train_step: unknown option {key!r}")
    # OpenMP on PyTorch's thread count unless told otherwise (see
    # _lowering_options).
    if cpu.get("openmp") and cpu.get("num_threads") is None:
        import torch
        cpu["num_threads"] = torch.get_num_threads()
    return driver.CompileOptions(
        micro_batches=micro_batches, batch_args=tuple(batch_args),
        allow_ghost_batch=rewrite.get("allow_ghost_batch"),
        recompute_statistics=rewrite.get("recompute_statistics"),
        fuse=rewrite.get("fuse"),
        accumulator_type=rewrite.get("accumulator_type") or "",
        recompute=rewrite.get("recompute") or "", in_place=tuple(in_place),
        cpu=cpu)


def compile_step(ir, pipelines, in_place):
    """The CPU library's lowered module of the step `ir` as `pipelines` (a
    StepPipelines) describes it, by one call of the driver, and whether its
    results `in_place` are written into their arguments (the driver tries
    and, when bufferization cannot keep one in place, lowers the copying
    form). CompileError with the compiler's diagnostics in PyTorch's
    words."""
    options = _driver_options(pipelines.micro_batches, pipelines.batch_args,
                              pipelines.options, in_place)
    try:
        result = driver.compile(ir, options, filename="<train_step>")
    except PipelineError as error:
        raise CompileError("ga-mlir refused the training step:\n" +
                           "\n".join(explain(d) for d in error.diagnostics),
                           first_code(error.diagnostics),
                           error.diagnostics) from None
    return result.module, bool(result.in_place)


def _run_pipeline(ir, pipeline, what):
    try:
        return run_pipeline(ir, pipeline)
    except PipelineError as error:
        raise CompileError(f"{what}:\n" + "\n".join(
            explain(d) for d in error.diagnostics),
            first_code(error.diagnostics), error.diagnostics) from None


def _rewrite_options(options):
    """The --ga-accumulate options among `options` that shape the rewrite,
    as the text of a pass option."""
    return " ".join(f"{_ACCUMULATE_OPTIONS[k]}={_option_text(v, k)}"
                    for k, v in sorted(options.items())
                    if k in _ACCUMULATE_OPTIONS and v is not None)
