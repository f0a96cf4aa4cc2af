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
of the private function that are its arguments' buffers. The driver
(lib/Driver/Driver.cpp, DriverOptions::inPlace) runs all of this and checks
on the IR that only the loss is left (CPU: the bufferized private function
takes only its arguments and the loss's out-parameter; CUDA: it returns
what the public step returns): if an update could not be written in place,
the caller would not see it, so it lowers the copying form instead and
says so (DriverResult::inPlace empty).
"""

# The private function that --ga-write-results-in-place moves the step into.
IMPL = "train_step_in_place"
