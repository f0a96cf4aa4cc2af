"""The options of compile_train_step as ga-mlir's compiler takes them: the
typed options of the driver (ga_mlir.driver.CompileOptions: one call in
process from the step to its lowered library form, or to its memory
report), for the CPU and CUDA, single-process and data-parallel steps
alike. Checked in Python's words; the compiler's diagnostics explained in
PyTorch's words by their codes. No pass pipeline text is built here."""

import dataclasses

from .. import PipelineError, aot, driver
from .._codes import compiler_code
from ._common import CompileError
from ._locations import explain


# The options of compile_train_step that the driver takes (Python spelling ->
# the pass option of the same meaning, for the documentation).
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
    # Row kernels with a warp or a block per row (docs/GPU.md, "A warp or
    # a block per row").
    "row_warp_min": "row-warp-min",
    "row_block_min": "row-block-min",
    "row_min_rows": "row-min-rows",
}


# The switches and counts among the options (the passes' bool and unsigned
# options): checked here, so that a wrong value is refused in Python's
# words rather than by the compiler.
_SWITCHES = {"allow_ghost_batch", "recompute_statistics", "fuse", "blas",
             "fuse_elementwise", "static_temporaries", "openmp", "cublas",
             "cuda_graphs", "fma", "split_row_reductions",
             "approximate_math", "share_buffers"}
_COUNTS = {"vector_width", "num_threads", "min_parallel_work", "block_size",
           "row_warp_min", "row_block_min", "row_min_rows"}


def _choices(key):
    """The values a choice among the options may take (None: not a
    choice): the recompute sets as the compiler lists them."""
    return driver.recompute_sets() if key == "recompute" else None


def _check_option(value, key):
    """Checks an option's value: TypeError for a switch that is not True or
    False, or a count that is not an int >= 0; ValueError for a choice that
    is not one of its values."""
    choices = _choices(key)
    if choices is not None and value not in choices:
        raise ValueError(f"compile_train_step: {key} must be one of " +
                         ", ".join(repr(c) for c in choices) +
                         f", got {value!r}")
    if key in _SWITCHES and not isinstance(value, bool):
        raise TypeError(f"compile_train_step: {key} must be True or False, "
                        f"got {value!r}")
    if key in _COUNTS and (isinstance(value, bool) or not isinstance(
            value, int) or value < 0):
        raise TypeError(f"compile_train_step: {key} must be an int >= 0, "
                        f"got {value!r}")


# The lowering's defaults of the libraries compile_train_step builds: for
# the CPU, the C interface, results as out-parameters, products on CBLAS,
# temporaries in static storage, element-wise fusion (since
# --ga-isolate-library-products keeps the matrix products out of it, every
# product stays a CBLAS call: GPT-style, N = 4: 2240 -> 1655 ms,
# bench/torch_accumulation.py, docs/CPU.md); for CUDA, the C interface and
# PTX for the first chip of the fatbin (ga-compile assembles it for each
# chip, aot.link_library).
_CPU_DEFAULTS = {"c_interface": True, "out_params": True, "blas": True,
                 "static_temporaries": True, "fuse_elementwise": True}
_NVVM_DEFAULTS = {"c_interface": True, "format": "isa",
                  "chip": aot.DEFAULT_CHIPS[0], "features": "+ptx80"}


def library_cpu_options(options):
    """The CPU lowering's options (ga_mlir.driver.CPU_OPTIONS names) of the
    library compiled under compile_train_step's `options`: the library's
    defaults, then the given ones; with openmp, PyTorch's thread count
    unless num_threads is given (one pool: a known count also splits the
    large products over those threads, see
    _call._one_blas_thread_under_openmp). The options of the rewrite and of
    CUDA are left out."""
    cpu = dict(_CPU_DEFAULTS)
    for key, value in sorted(options.items()):
        if value is not None and key in _LOWER_OPTIONS:
            _check_option(value, key)
            cpu[key] = value
    if cpu.get("openmp") and cpu.get("num_threads") is None:
        import torch
        cpu["num_threads"] = torch.get_num_threads()
    return cpu


def step_options(micro_batches, batch_args, options, target="cpu"):
    """compile_train_step's `options` as the driver's (ga_mlir.driver
    .CompileOptions) for the library of `target` ("cpu" or "cuda") at N =
    `micro_batches` with the per-sample arguments `batch_args`: the
    lowering's defaults of the library (_CPU_DEFAULTS, library_cpu_options;
    _NVVM_DEFAULTS) under the given options, each value checked."""
    rewrite = {}
    nvvm = dict(_NVVM_DEFAULTS)
    names = _NVVM_OPTIONS if target == "cuda" else _LOWER_OPTIONS
    for key, value in sorted(options.items()):
        if value is None:
            continue
        _check_option(value, key)
        if key in _ACCUMULATE_OPTIONS:
            rewrite[key] = value
        elif key not in names:
            raise TypeError(f"compile_train_step: unknown option {key!r} "
                            f"for target={target!r}")
        elif target == "cuda":
            nvvm[key] = value
    return driver.CompileOptions(
        micro_batches=micro_batches, batch_args=tuple(batch_args),
        allow_ghost_batch=rewrite.get("allow_ghost_batch"),
        recompute_statistics=rewrite.get("recompute_statistics"),
        fuse=rewrite.get("fuse"),
        accumulator_type=rewrite.get("accumulator_type") or "",
        recompute=rewrite.get("recompute") or "", target=target,
        cpu=library_cpu_options(options) if target == "cpu" else {},
        nvvm=nvvm if target == "cuda" else {})


def report_options(compile_options, options, in_place, roles, target="cpu"):
    """`compile_options` (step_options) for the memory report of the step
    (target "report"): bufferized as the library of `target` under
    `options` is (the CPU library's heap, or for "cuda" the GPU step's
    device memory with `compile_options`' GPU options), with its results
    `in_place` written in place, its arguments of the classes `roles`."""
    if target == "cuda":
        return dataclasses.replace(
            compile_options, target="report", memory_target="cuda",
            in_place=tuple(in_place), report_roles=tuple(roles), cpu={})
    return dataclasses.replace(
        compile_options, target="report", in_place=tuple(in_place),
        report_roles=tuple(roles), cpu=library_cpu_options(options),
        nvvm={})


def run_driver(ir, compile_options, what):
    """ga_mlir.driver.compile, its refusal as CompileError (`what`, then the
    compiler's diagnostics in PyTorch's words, with the first code)."""
    if compile_options.target == "cuda":
        # libdevice (math functions in kernels) through CUDA_HOME.
        try:
            aot.Toolchain().export_cuda_home()
        except aot.CompileError as error:
            raise CompileError(f"target='cuda': {error}",
                               error.code, error.diagnostics) from None
    try:
        return driver.compile(ir, compile_options, filename="<train_step>")
    except PipelineError as error:
        raise CompileError(f"{what}:\n" +
                           "\n".join(explain(d) for d in error.diagnostics),
                           compiler_code(error.diagnostics),
                           error.diagnostics) from None


def compile_step(ir, compile_options, in_place):
    """The library's lowered module of the step `ir` under
    `compile_options` (step_options), for its target, by one call of the
    driver, and whether its results `in_place` are written into their
    arguments (the driver tries and, when the lowering cannot keep one in
    place, lowers the copying form). CompileError with the compiler's
    diagnostics in PyTorch's words."""
    result = run_driver(ir, dataclasses.replace(
        compile_options, in_place=tuple(in_place)),
        "ga-mlir refused the training step")
    return result.module, bool(result.in_place)
