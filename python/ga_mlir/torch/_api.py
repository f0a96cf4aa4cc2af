"""The public entry points of the PyTorch frontend, above every kind of
step: compile_train_step builds a single-process (_step), data-parallel
(_distributed) or sharded-parameter (_fsdp) step, load_step a single-process
(_saved) or data-parallel (_dp_saved) one. They choose among those classes
here, at the top, so that no class dispatches up to its subclasses and no
module imports a layer above its own."""

from ._arguments import check_compile_arguments
from ._distributed import DataParallelTrainStep, data_parallel_options
from ._dp_saved import load
from ._fsdp import ShardedParametersTrainStep
from ._step import CompiledTrainStep


def compile_train_step(model, loss_fn, optimizer, example_inputs,
                       micro_batches=None, micro_batch_size=None,
                       max_memory=None, **kwargs):
    """Compiles `loss_fn(model, *inputs).backward(); optimizer.step();
    optimizer.zero_grad()` with gradient accumulation over micro-batches.

    model: a torch.nn.Module (float32 parameters on the CPU).
    loss_fn(model, *inputs): the scalar loss of the whole batch, or
        (loss, metrics) with metrics a tensor or a dict, tuple or list of
        tensors (nested): the step then returns (loss, metrics) with the
        whole batch's values (sums, means, max/min over the batch and
        per-sample tensors; others are refused at their line: _metrics).
    optimizer: a torch.optim.Optimizer over (some of) the model's parameters
        whose step is a closed-form update (SGD, Adam, AdamW, RMSprop,
        RAdam, ..., or one written by the user): its own step() is traced
        into the compiled step (see _optimizers).
    example_inputs: the per-sample inputs of one batch (tensors).
    micro_batches=N, or micro_batch_size=M (N = ceil(B / M)), or
        max_memory=bytes (an int, or a string such as "256MiB", "1.5GiB"
        or "2GB": KiB, MiB, GiB, TiB, and kB, MB, GB, TB in powers of 1000):
        N and the recompute set (recompute=, --ga-rematerialize) of least
        estimated time whose total peak (step.memory_report()) fits, as
        --ga-accumulate="max-memory=..." chooses them among none,
        pointwise, attention, products and layers (--ga-rematerialize);
        recompute="none" (or another set) fixes the set, micro_batches=N
        with it fixes N; a budget turns share_buffers on (unless given):
        the recomputed values then reuse dead buffers; CompileError with
        the located message, which names the smallest budget that fits,
        when nothing fits. micro_batch_size= with
        another of the three is an error (CompileError, the message of
        --ga-choose-micro-batches). `step.chosen_micro_batches()` says N,
        `step.chosen_configuration()` the whole choice.
    max_grad_norm: clip the accumulated gradient as clip_grad_norm_ does.
    batch_dims: the batch dimension of each input (default 0).
    target: "cpu" (default) or "cuda": the step compiled for an NVIDIA GPU
        (--ga-lower-to-nvvm: products on cuBLASLt, the micro-batch body as
        a CUDA graph, kernels for sm_80 and sm_90); tracing runs on the CPU
        (example inputs and the model on the CPU), calls take CUDA tensors
        (model.cuda() after compiling) and run after the work queued on
        torch.cuda.current_stream(); calling without a GPU raises
        CompileError. Options: cublas, cuda_graphs, fma, block_size,
        fuse_elementwise, row_warp_min, row_block_min, row_min_rows (of
        --ga-lower-to-nvvm).
    indexing: "one-hot" (the default for target="cpu": nll_loss and
        embedding as comparisons with an iota) or "gather" (the default for
        target="cuda": PyTorch's gather forward; needs the exact rewrite of
        gathers in linalg payloads). Both are exact; the embedding's
        gradient is a product with the one-hot rows either way.
    mcpu: llc's -mcpu for target="cpu" (default "native"; a saved step
        for other machines: e.g. "x86-64-v3").
    in_place: write the new parameters and optimizer states directly into
        their tensors' storage (default; no copy: see _inplace). False, or
        an update that bufferization cannot write in place, returns them
        into buffers of ours that are copied after the call.
        `step.writes_in_place()` says which. (With fuse_elementwise=True the
        fusion gives the updates fresh destinations again: the step then
        copies each update into place itself, inside the call.)
    process_group: inside an initialized torch.distributed process group
        the step is data-parallel over the default group (another group:
        process_group=group; None: this process alone). Each rank calls the
        step with its shard of the global batch; one call equals one step
        on the concatenation of all ranks' shards (see _distributed).
    bucket_cap_mb: the size of the gradient buckets all-reduced as one
        collective each (default 25, as DDP; 0: one per gradient).
    shard_optimizer: ZeRO-1 in a process group (default False): each rank
        updates only its rows of each parameter and keeps only those rows
        of the optimizer state (optimizer.state holds them); gradients are
        reduce-scattered, parameters all-gathered (see _distributed).
    shard: "parameters" in a process group: FSDP/ZeRO-3, each rank holds
        its rows of the parameters, gradients and optimizer state (see
        _fsdp); default None. With max_memory: N and, per bucket of
        parameters (bucket_cap_mb), kept gathered or not and reduced per
        micro-batch or after the loop, so that the per-rank peak fits
        with the fewest bytes moved (step.shard_plan() reports it);
        without, every bucket resharded after use. share_buffers is on
        unless given (the gathered parameters share storage).
    ga-opt options: accumulator_type, allow_ghost_batch,
        recompute_statistics, fuse (of --ga-accumulate); blas,
        vector_width, fuse_elementwise, static_temporaries, openmp,
        num_threads (with openmp: default torch.get_num_threads(); the
        loops and the large matrix products run on those threads, OpenBLAS
        on one thread per call), min_parallel_work (with openmp: the
        estimated operations below which a loop or a product runs on one
        thread, default 32768; 0: every loop parallel),
        split_row_reductions, approximate_math (of
        --ga-lower-to-cpu; the last two on by default: row sums in vector
        lanes and polynomial exp/tanh/erf, a few ulp from libm, for speed;
        False for sequential row sums and libm).
    """
    check_compile_arguments(model, loss_fn, optimizer, example_inputs,
                            micro_batches, micro_batch_size, max_memory,
                            kwargs.get("batch_dims"))
    group, bucket_cap_mb, shard = data_parallel_options(kwargs)
    if group is not None:
        return data_parallel_step(
            model, loss_fn, optimizer, example_inputs, group, bucket_cap_mb,
            shard,
            micro_batches=micro_batches, micro_batch_size=micro_batch_size,
            max_memory=max_memory, **kwargs)
    return CompiledTrainStep(model, loss_fn, optimizer, example_inputs,
                             micro_batches=micro_batches,
                             micro_batch_size=micro_batch_size,
                             max_memory=max_memory, **kwargs)


def data_parallel_step(model, loss_fn, optimizer, example_inputs, group,
                       bucket_cap_mb, shard, **kwargs):
    """The step of one rank: sharded parameters (shard == "parameters",
    _fsdp), ZeRO-1 (shard True) or all-reduced gradients."""
    if shard == "parameters":
        return ShardedParametersTrainStep(model, loss_fn, optimizer,
                                          example_inputs, group,
                                          bucket_cap_mb, **kwargs)
    return DataParallelTrainStep(model, loss_fn, optimizer, example_inputs,
                                 group, bucket_cap_mb, shard_optimizer=shard,
                                 **kwargs)


def load_step(directory, model, optimizer, **kwargs):
    """The step saved in `directory` by CompiledTrainStep.save, bound to
    `model` and `optimizer` (checked against its signature). A step saved
    data-parallel binds to a torch.distributed process group: the default
    one, or `process_group=`; a single-process step loaded inside an
    initialized process group needs `process_group=None` (this rank trains
    alone). See _dp_saved."""
    unknown = set(kwargs) - {"process_group"}
    if unknown:
        raise TypeError(f"load_step: unknown argument {sorted(unknown)[0]!r}")
    return load(directory, model, optimizer, **kwargs)
