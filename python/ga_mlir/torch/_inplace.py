"""Zero-copy updates: the step writes the new parameters and optimizer states
into the buffers of the old ones.

After `--ga-accumulate`, the step `@train_step(args) -> (new values...,
loss)` is rewritten by the pass --ga-write-results-in-place
(lib/Codegen/Common/WriteResultsInPlace.cpp) into

    func.func private @train_step_in_place(args) -> (same results) {
      ...
      %u = bufferization.materialize_in_destination %new in %arg_j
      return %u, ..., %loss
    }
    func.func @train_step(args) -> loss {
      %r:K = call @train_step_in_place(args)
      return %r#(K-1)
    }

Upstream passes then do the work, and prove it: `eliminate-empty-tensors`
(which --ga-lower-to-cpu runs after element-wise fusion, right before
bufferization; --ga-lower-to-nvvm runs --ga-reuse-replaced-buffers for it)
makes the op that computes `%new` write into `%arg_j`'s
tensor; one-shot bufferization keeps it in place when no later read of the old value
conflicts (otherwise it copies, and the result is no longer the argument);
`drop-equivalent-buffer-results` (in both pipelines) removes the results
of the private function that are its arguments' buffers. `check_lowered`
(CPU: out-parameters) and `check_lowered_results` (CUDA: returned values)
then check that only the loss is left: if an update could not be written in
place, the caller would not see it, so the library is not used.
"""

from .. import PipelineError, function_info, run_pipeline

IMPL = "train_step_in_place"


def write_results_in_place(text, pairs, name="train_step"):
    """The module `text` with `@name`'s result i written into argument j for
    each (i, j) in `pairs` and dropped from `@name`'s results, by the pass
    --ga-write-results-in-place (see the module docstring); None when the
    pass refuses (then the caller keeps the copying path)."""
    option = ",".join(f"{i}:{j}" for i, j in pairs)
    try:
        return run_pipeline(text, "builtin.module(ga-write-results-in-place{"
                            f"func={name} pairs={option}}})")
    except PipelineError:
        return None


def check_lowered(lowered, num_args, num_kept):
    """Whether the lowered private function takes exactly its `num_args`
    arguments and `num_kept` out-parameters (memref descriptors: two
    pointers each), i.e. every other result was dropped as written in
    place."""
    arguments = function_info(lowered, IMPL).arguments
    return arguments.count("!llvm.ptr") == 2 * (num_args + num_kept)


def check_lowered_results(lowered, name="train_step"):
    """Whether the lowered private function returns exactly the results of
    the public `@name` (the GPU form: results come back as values, not
    out-parameters), i.e. every update was dropped as written in place;
    False when either function is missing."""
    try:
        return function_info(lowered, IMPL).results == \
            function_info(lowered, name).results
    except PipelineError:
        return False
