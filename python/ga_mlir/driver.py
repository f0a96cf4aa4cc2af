"""The compiler driver of ga-mlir from Python: one call from a training step
to its lowered form (include/ga-c/Driver.h), with typed options and a typed
result, each diagnostic carrying its stable code (ga_mlir.Diagnostic).

    result = ga_mlir.driver.compile(text, CompileOptions(micro_batches=4,
                                                         batch_args=[(1, 0)]))
    result.micro_batches, result.in_place, result.module

No pass pipeline text is built: the options are the fields of
MlirGACompileOptions, checked here in Python's words.
"""

import ctypes
import dataclasses
import warnings

from . import (GADiagnosticWarning, PipelineError, _diagnostic_collector,
               _DiagnosticCallback, _file_name_ref, _load, _LogicalResult,
               _string_ref, _StringRef)

__all__ = ["CompileOptions", "CompileResult", "ShardOptimizer",
           "ShardParameters", "ShardPlan", "compile", "parse_byte_count",
           "recompute_sets", "CPU_OPTIONS", "NVVM_OPTIONS"]


# The switches and counts of --ga-lower-to-cpu that compile takes (Python
# spelling -> field of MlirGACompileOptions).
CPU_OPTIONS = {
    "blas": "blas", "fuse_elementwise": "fuseElementwise",
    "static_temporaries": "staticTemporaries", "openmp": "openmp",
    "split_row_reductions": "splitRowReductions",
    "approximate_math": "approximateMath", "share_buffers": "shareBuffers",
    "c_interface": "cInterface",
    "out_params": "outParams", "vector_width": "vectorWidth",
    "num_threads": "numThreads", "min_parallel_work": "minParallelWork",
}
# The options of --ga-lower-to-nvvm that compile takes for target "cuda"
# (Python spelling -> field of MlirGANVVMOptions).
NVVM_OPTIONS = {
    "chip": "chip", "features": "features", "format": "format",
    "ptxas_options": "ptxasOptions", "opt_level": "optLevel",
    "block_size": "blockSize", "fuse_elementwise": "fuseElementwise",
    "fold_unit_dims": "foldUnitDims", "fuse_rows": "fuseRows",
    "fuse_siblings": "fuseSiblings", "recompute_shared": "recomputeShared",
    "gemm_tile": "gemmTile", "gemm_min_reduction": "gemmMinReduction",
    "split_reduction_min": "splitReductionMin",
    "split_row_reduction_min": "splitRowReductionMin",
    "row_warp_min": "rowWarpMin", "row_block_min": "rowBlockMin",
    "row_min_rows": "rowMinRows", "fma": "fma",
    "cublas": "cublas", "cuda_graphs": "cudaGraphs",
    "c_interface": "cInterface",
}
COUNT_OPTIONS = _COUNTS = {"vector_width", "num_threads", "min_parallel_work", "opt_level",
           "block_size", "gemm_tile", "gemm_min_reduction",
           "split_reduction_min", "split_row_reduction_min",
           "row_warp_min", "row_block_min", "row_min_rows"}
STRING_OPTIONS = _STRINGS = {"chip", "features", "format", "ptxas_options"}


@dataclasses.dataclass
class CompileOptions:
    """What to compile and how (MlirGACompileOptions). N is given by one of
    micro_batches, micro_batch_size and max_memory (with max_memory,
    micro_batches fixes N and only the recompute set is chosen).
    batch_args: (argument, dimension) pairs; in_place: (result, argument)
    pairs to write in place; cpu: --ga-lower-to-cpu options by their Python
    names (CPU_OPTIONS), nvvm: --ga-lower-to-nvvm options (NVVM_OPTIONS),
    None keeping the pipeline's default; target "cpu", "cuda", None (the
    rewritten step only), "choice" (N and the recompute set only) or
    "report" (the memory report, as the CPU library bufferizes the step, of
    the argument classes report_roles, on a data-parallel step's shard
    report_shard = (begin, end); with memory_target "cuda", as the GPU step
    is bufferized, in device bytes, also what max_memory measures;
    reserved_bytes: what the caller allocates to return the results, kept
    out of max_memory and counted in the predicted peak) or
    "shard-plan" (--ga-shard-plan's JSON of
    the step sharded by shard_parameters' default plan, chosen as
    shard_plan, a ShardPlan, asks). rewrite=False lowers the step as it is.
    A data-parallel step: gradient buckets of bucket_size bytes,
    host_collectives (torch.distributed's, for the CPU) or mpi_collectives
    (MPI_Allreduce, for the CPU, with the MPI ABI mpi_implementation,
    "MPICH" or "OpenMPI", and mpi_entry, the function that initializes and
    finalizes MPI, if any), shard_optimizer
    (ZeRO-1: a ShardOptimizer), shard_parameters (FSDP: a
    ShardParameters)."""
    micro_batches: int = 0
    micro_batch_size: int = 0
    max_memory: str = ""
    batch_args: tuple = ()
    allow_ghost_batch: bool = None
    recompute_statistics: bool = None
    fuse: bool = None
    accumulator_type: str = ""
    recompute: str = ""
    in_place: tuple = ()
    target: str = "cpu"
    cpu: dict = dataclasses.field(default_factory=dict)
    nvvm: dict = dataclasses.field(default_factory=dict)
    func_name: str = "train_step"
    rewrite: bool = True
    bucket_size: int = 0
    host_collectives: bool = False
    mpi_collectives: bool = False
    mpi_implementation: str = ""
    mpi_entry: str = ""
    shard_optimizer: "ShardOptimizer" = None
    shard_parameters: "ShardParameters" = None
    report_roles: tuple = ()
    report_shard: tuple = None
    shard_plan: "ShardPlan" = None
    memory_target: str = "cpu"
    reserved_bytes: int = 0


@dataclasses.dataclass
class ShardParameters:
    """FSDP for one rank (--ga-shard-parameters): the sharded parameters'
    arguments and results, the loss's result, the file the shard plan is
    written to, and the plan chosen under a budget: the parameter arguments
    kept gathered across the loop and the parameter results whose gradients
    are reduce-scattered once after it (empty: all resharded after use)."""
    rank: int
    world: int
    loss: int
    param_args: tuple = ()
    param_results: tuple = ()
    plan_output: str = ""
    keep_gathered: tuple = ()
    reduce_after_loop: tuple = ()


@dataclasses.dataclass
class ShardPlan:
    """What target "shard-plan" chooses from (--ga-shard-plan): the
    candidate numbers of micro-batches, the per-rank peak (bytes) of the
    default plan at each, and the per-rank budget ("": every bucket
    resharded); the buckets hold bucket_size bytes of parameters."""
    micro_batches: tuple = ()
    base_peaks: tuple = ()
    max_memory: str = ""


@dataclasses.dataclass
class ShardOptimizer:
    """ZeRO-1 for one rank (--ga-shard-optimizer): the parameters whose rows
    it updates and their states' indices among the step's results and
    arguments."""
    rank: int
    world: int
    params: tuple = ()
    state_results: tuple = ()
    state_args: tuple = ()


@dataclasses.dataclass
class CompileResult:
    """What the driver chose and produced (MlirGACompileResult): N, the
    recompute set, under a budget the predicted peak and the recomputation's
    work (None otherwise), the (result, argument) pairs written in place
    (empty: the copying form) and the printed module (lowered for the
    target, the rewritten step with target=None, empty with "choice")."""
    micro_batches: int
    recompute: str
    predicted_peak: int
    recompute_work: int
    in_place: list
    module: str
    memory_report: str = ""
    shard_plan: str = ""


class _NVVMOptions(ctypes.Structure):
    """MlirGANVVMOptions (include/ga-c/Driver.h)."""
    _fields_ = [("chip", _StringRef), ("features", _StringRef),
                ("format", _StringRef), ("ptxasOptions", _StringRef),
                ("optLevel", ctypes.c_int64), ("blockSize", ctypes.c_int64),
                ("fuseElementwise", ctypes.c_int),
                ("foldUnitDims", ctypes.c_int), ("fuseRows", ctypes.c_int),
                ("fuseSiblings", ctypes.c_int),
                ("recomputeShared", ctypes.c_int),
                ("gemmTile", ctypes.c_int64),
                ("gemmMinReduction", ctypes.c_int64),
                ("splitReductionMin", ctypes.c_int64),
                ("splitRowReductionMin", ctypes.c_int64),
                ("rowWarpMin", ctypes.c_int64),
                ("rowBlockMin", ctypes.c_int64),
                ("rowMinRows", ctypes.c_int64),
                ("fma", ctypes.c_int), ("cublas", ctypes.c_int),
                ("cudaGraphs", ctypes.c_int), ("cInterface", ctypes.c_int)]


class _Options(ctypes.Structure):
    """MlirGACompileOptions (include/ga-c/Driver.h)."""
    _fields_ = [("funcName", _StringRef), ("microBatches", ctypes.c_int64),
                ("microBatchSize", ctypes.c_int64),
                ("maxMemory", _StringRef),
                ("batchArgs", ctypes.POINTER(ctypes.c_int64)),
                ("numBatchArgs", ctypes.c_ssize_t),
                ("allowGhostBatch", ctypes.c_int),
                ("recomputeStatistics", ctypes.c_int),
                ("fuse", ctypes.c_int), ("accumulatorType", _StringRef),
                ("recompute", _StringRef),
                ("inPlace", ctypes.POINTER(ctypes.c_int64)),
                ("numInPlace", ctypes.c_ssize_t), ("target", ctypes.c_int),
                ("blas", ctypes.c_int), ("fuseElementwise", ctypes.c_int),
                ("staticTemporaries", ctypes.c_int),
                ("openmp", ctypes.c_int),
                ("splitRowReductions", ctypes.c_int),
                ("approximateMath", ctypes.c_int),
                ("shareBuffers", ctypes.c_int),
                ("cInterface", ctypes.c_int), ("outParams", ctypes.c_int),
                ("vectorWidth", ctypes.c_int64),
                ("numThreads", ctypes.c_int64),
                ("minParallelWork", ctypes.c_int64),
                ("nvvm", _NVVMOptions), ("rewrite", ctypes.c_int),
                ("bucketSize", ctypes.c_int64),
                ("hostCollectives", ctypes.c_int),
                ("mpiCollectives", ctypes.c_int),
                ("mpiImplementation", _StringRef), ("mpiEntry", _StringRef),
                ("shardRank", ctypes.c_int64),
                ("shardWorld", ctypes.c_int64),
                ("shardParams", ctypes.POINTER(ctypes.c_int64)),
                ("numShardParams", ctypes.c_ssize_t),
                ("shardStateResults", ctypes.POINTER(ctypes.c_int64)),
                ("numShardStateResults", ctypes.c_ssize_t),
                ("shardStateArgs", ctypes.POINTER(ctypes.c_int64)),
                ("numShardStateArgs", ctypes.c_ssize_t),
                ("fsdpRank", ctypes.c_int64), ("fsdpWorld", ctypes.c_int64),
                ("fsdpLoss", ctypes.c_int64),
                ("fsdpParamArgs", ctypes.POINTER(ctypes.c_int64)),
                ("numFsdpParamArgs", ctypes.c_ssize_t),
                ("fsdpParamResults", ctypes.POINTER(ctypes.c_int64)),
                ("numFsdpParamResults", ctypes.c_ssize_t),
                ("fsdpPlanOutput", _StringRef),
                ("fsdpKeepGathered", ctypes.POINTER(ctypes.c_int64)),
                ("numFsdpKeepGathered", ctypes.c_ssize_t),
                ("fsdpReduceAfterLoop", ctypes.POINTER(ctypes.c_int64)),
                ("numFsdpReduceAfterLoop", ctypes.c_ssize_t),
                ("reportRoles", ctypes.POINTER(_StringRef)),
                ("numReportRoles", ctypes.c_ssize_t),
                ("reportShardBegin", ctypes.c_int64),
                ("reportShardEnd", ctypes.c_int64),
                ("shardPlanMicroBatches", ctypes.POINTER(ctypes.c_int64)),
                ("numShardPlanMicroBatches", ctypes.c_ssize_t),
                ("shardPlanBasePeaks", ctypes.POINTER(ctypes.c_int64)),
                ("numShardPlanBasePeaks", ctypes.c_ssize_t),
                ("shardPlanMaxMemory", _StringRef),
                ("memoryTarget", ctypes.c_int),
                ("reservedBytes", ctypes.c_int64)]


class _Result(ctypes.Structure):
    """MlirGACompileResult (include/ga-c/Driver.h)."""
    _fields_ = [("microBatches", ctypes.c_int64), ("recompute", _StringRef),
                ("predictedPeak", ctypes.c_int64),
                ("recomputeWork", ctypes.c_int64),
                ("inPlace", ctypes.POINTER(ctypes.c_int64)),
                ("numInPlace", ctypes.c_ssize_t), ("module", _StringRef),
                ("memoryReport", _StringRef), ("shardPlan", _StringRef)]


_ResultCallback = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Result),
                                   ctypes.c_void_p)
_TARGETS = {"cpu": 0, None: 1, "choice": 2, "cuda": 3, "report": 4,
            "shard-plan": 5}


def _library():
    lib = _load()
    if not getattr(lib, "_ga_driver_bound", False):
        lib.mlirGACompileOptionsInit.argtypes = [ctypes.POINTER(_Options)]
        lib.mlirGACompileOptionsInit.restype = None
        lib.mlirGACompile.argtypes = [
            _StringRef, _StringRef, ctypes.POINTER(_Options), _ResultCallback,
            _DiagnosticCallback, ctypes.c_void_p]
        lib.mlirGACompile.restype = _LogicalResult
        lib.mlirGAGetRecomputeSets.argtypes = []
        lib.mlirGAGetRecomputeSets.restype = _StringRef
        lib.mlirGAParseByteCount.argtypes = [
            _StringRef, ctypes.POINTER(ctypes.c_int64)]
        lib.mlirGAParseByteCount.restype = _LogicalResult
        lib._ga_driver_bound = True
    return lib



def recompute_sets():
    """The recompute sets of --ga-rematerialize as the compiler lists them
    (mlirGAGetRecomputeSets), from the least to the most recomputation."""
    return tuple(_text(_library().mlirGAGetRecomputeSets()).split(","))


def parse_byte_count(text):
    """A byte count as max-memory takes it (mlirGAParseByteCount: a number,
    optionally followed by B, KiB, MiB, GiB, TiB, kB, MB, GB or TB), in
    whole bytes; None when `text` is not one."""
    buffer, ref = _string_ref(str(text).encode())
    out = ctypes.c_int64()
    result = _library().mlirGAParseByteCount(ref, ctypes.byref(out))
    del buffer  # kept alive until the call returned
    return out.value if result.value else None


def _pairs(pairs):
    flat = [int(v) for pair in pairs for v in pair]
    return (ctypes.c_int64 * max(len(flat), 1))(*flat), len(flat) // 2


def _ints(values):
    flat = [int(v) for v in values]
    return (ctypes.c_int64 * max(len(flat), 1))(*flat), len(flat)


def _text(ref):
    return ctypes.string_at(ref.data, ref.length).decode("utf-8")


def _set_lowering_options(structure, given, names, what, text):
    """Sets the fields `names` of `structure` from `given` (Python names;
    None keeps the default), checking each value's kind."""
    for key, value in given.items():
        if key not in names:
            raise TypeError(f"compile: unknown {what} option {key!r}")
        if value is None:
            continue
        if key in _STRINGS:
            if not isinstance(value, str):
                raise TypeError(f"compile: {key} must be a str, got "
                                f"{value!r}")
            setattr(structure, names[key], text(value))
            continue
        if key in _COUNTS and (isinstance(value, bool) or
                               not isinstance(value, int) or value < 0):
            raise TypeError(f"compile: {key} must be an int >= 0, got "
                            f"{value!r}")
        if key not in _COUNTS and not isinstance(value, bool):
            raise TypeError(f"compile: {key} must be True or False, got "
                            f"{value!r}")
        setattr(structure, names[key], int(value))


def compile(ir, options, filename=None):
    """Compiles the step of the module text `ir` under `options`
    (CompileOptions) and returns a CompileResult. Raises PipelineError with
    the diagnostics (ga_mlir.Diagnostic, each with its code) on an error;
    warnings of a successful compilation are issued as
    GADiagnosticWarning. TypeError for an unknown CPU option or a value of
    the wrong kind; ValueError for an unknown target. For "cuda", the
    kernels' libdevice is found through CUDA_HOME (see aot.Toolchain)."""
    if options.target not in _TARGETS:
        raise ValueError(f"compile: target must be 'cpu', 'cuda', None, "
                         f"'choice', 'report' or 'shard-plan', got "
                         f"{options.target!r}")
    lib = _library()
    c = _Options()
    lib.mlirGACompileOptionsInit(ctypes.byref(c))
    keep = []  # the buffers the structure points into

    def text(value):
        buffer, ref = _string_ref(str(value).encode("utf-8"))
        keep.append(buffer)
        return ref

    c.funcName = text(options.func_name)
    c.microBatches = options.micro_batches or 0
    c.microBatchSize = options.micro_batch_size or 0
    c.maxMemory = text(options.max_memory or "")
    batch_args, c.numBatchArgs = _pairs(options.batch_args)
    in_place, c.numInPlace = _pairs(options.in_place)
    keep += [batch_args, in_place]
    c.batchArgs, c.inPlace = batch_args, in_place
    for field, value in (("allowGhostBatch", options.allow_ghost_batch),
                         ("recomputeStatistics",
                          options.recompute_statistics),
                         ("fuse", options.fuse)):
        if value is not None:
            setattr(c, field, int(bool(value)))
    c.accumulatorType = text(options.accumulator_type or "")
    c.recompute = text(options.recompute or "")
    c.target = _TARGETS[options.target]
    c.rewrite = int(bool(options.rewrite))
    c.bucketSize = int(options.bucket_size or 0)
    c.hostCollectives = int(bool(options.host_collectives))
    c.mpiCollectives = int(bool(options.mpi_collectives))
    c.mpiImplementation = text(options.mpi_implementation or "")
    c.mpiEntry = text(options.mpi_entry or "")
    zero = options.shard_optimizer
    if zero is not None:
        c.shardRank, c.shardWorld = int(zero.rank), int(zero.world)
        for field, values in (("shardParams", zero.params),
                              ("shardStateResults", zero.state_results),
                              ("shardStateArgs", zero.state_args)):
            array, count = _ints(values)
            keep.append(array)
            setattr(c, field, array)
            setattr(c, "num" + field[0].upper() + field[1:], count)
    fsdp = options.shard_parameters
    if fsdp is not None:
        c.fsdpRank, c.fsdpWorld = int(fsdp.rank), int(fsdp.world)
        c.fsdpLoss = int(fsdp.loss)
        c.fsdpPlanOutput = text(fsdp.plan_output)
        for field, values in (("ParamArgs", fsdp.param_args),
                              ("ParamResults", fsdp.param_results),
                              ("KeepGathered", fsdp.keep_gathered),
                              ("ReduceAfterLoop", fsdp.reduce_after_loop)):
            array, count = _ints(values)
            keep.append(array)
            setattr(c, "fsdp" + field, array)
            setattr(c, "numFsdp" + field, count)
    roles = (_StringRef * max(len(options.report_roles), 1))(
        *[text(r) for r in options.report_roles])
    keep.append(roles)
    c.reportRoles, c.numReportRoles = roles, len(options.report_roles)
    if options.report_shard is not None:
        c.reportShardBegin, c.reportShardEnd = map(int, options.report_shard)
    plan = options.shard_plan
    if plan is not None:
        for field, values in (("MicroBatches", plan.micro_batches),
                              ("BasePeaks", plan.base_peaks)):
            array, count = _ints(values)
            keep.append(array)
            setattr(c, "shardPlan" + field, array)
            setattr(c, "numShardPlan" + field, count)
        c.shardPlanMaxMemory = text(plan.max_memory or "")
    if options.memory_target not in ("cpu", "cuda"):
        raise ValueError("compile: memory_target must be 'cpu' or 'cuda', "
                         f"got {options.memory_target!r}")
    c.memoryTarget = _TARGETS[options.memory_target]
    c.reservedBytes = int(options.reserved_bytes or 0)
    _set_lowering_options(c, options.cpu, CPU_OPTIONS, "CPU", text)
    _set_lowering_options(c.nvvm, options.nvvm, NVVM_OPTIONS, "NVVM", text)

    results = []

    def on_result(pointer, _):
        r = pointer.contents
        pairs = [(r.inPlace[2 * i], r.inPlace[2 * i + 1])
                 for i in range(r.numInPlace)]
        results.append(CompileResult(
            r.microBatches, _text(r.recompute),
            None if r.predictedPeak < 0 else r.predictedPeak,
            None if r.recomputeWork < 0 else r.recomputeWork, pairs,
            _text(r.module), _text(r.memoryReport), _text(r.shardPlan)))

    diagnostics, diagnostic_callback = _diagnostic_collector()
    result_callback = _ResultCallback(on_result)
    ir_buffer, ir_ref = _string_ref(ir.encode("utf-8"))
    name_buffer, name_ref = _file_name_ref(filename)
    status = lib.mlirGACompile(ir_ref, name_ref, ctypes.byref(c),
                               result_callback, diagnostic_callback, None)
    del ir_buffer, name_buffer
    if not status.value:
        raise PipelineError(diagnostics)
    for diagnostic in diagnostics:
        warnings.warn(diagnostic.rstrip("\n"), GADiagnosticWarning,
                      stacklevel=2)
    return results[0]
