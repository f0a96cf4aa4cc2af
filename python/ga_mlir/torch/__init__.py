"""Compile a PyTorch training step with gradient accumulation.

    from ga_mlir.torch import compile_train_step
    step = compile_train_step(model, loss_fn, optimizer,
                              example_inputs=(x, y), micro_batches=4)
    loss = step(x, y)

One call of `step` does what

    loss_fn(model, x, y).backward(); optimizer.step(); optimizer.zero_grad()

does on the whole batch, in N micro-batches whose gradients are accumulated
inside one compiled function: `model`'s parameters and the optimizer's state
tensors are updated in place (their storage is kept: `data_ptr()` does not
change) and the loss is returned as a 0-d tensor.

How: forward, backward (`torch.func.grad_and_value`) and the functional
optimizer update are traced as one function (`make_fx` with PyTorch's core
ATen decompositions), imported with torch-mlir's FX importer to
linalg-on-tensors, rewritten by `--ga-accumulate` (the per-sample arguments
are the positional inputs), its new parameters and states written into the
old ones' buffers (`bufferization.materialize_in_destination`, proven in
place by one-shot bufferization: zero-copy, see _inplace), and compiled
ahead of time for the CPU (`--ga-lower-to-cpu`, CBLAS, the loss into an
out-parameter), then called through ctypes on the tensors' own memory. The
library is cached by a hash of the IR and the options (GA_MLIR_CACHE_DIR,
default ~/.cache/ga_mlir).

Modules: _decompositions (ATen ops without gathers and scatters),
_optimizers (torch.optim's updates), _modules (MultiheadAttention and the
recurrent layers in batch-first forms), _batchnorm (BatchNorm in training
mode), _convolutions (grouped and transposed convolutions in forms
torch-mlir lowers), _philox (dropout and other random draws, the same for
any N), _rewrites (the traced graph before import: indexing with iotas as
views), _gathers (per-sample reads and writes by index, x[arange(B),
idx], as comparisons with an iota), _masked (selections by a boolean mask
reduced as masked reductions), _guards (branches on the size of a selection,
checked on each batch), _locations (the user's line and words of a refusal), _export
(tracing under PyTorch's compiling state, torch-mlir), _inplace (the
zero-copy form), _options (the driver's typed options), _step (the
compiled step: one driver call, the library, the call), _api
(compile_train_step and load_step, above every kind of step), _layout (the
argument layout, the signature of a saved step), _call (calling a library
on CPU or CUDA tensors), _saved (save and load_step).

Saved steps: `step.save(dir)` writes the library (CPU or CUDA) and its
signature; `load_step(dir, model, optimizer)` runs it where only torch is
installed (no torch-mlir, no LLVM), after checking the model and the
optimizer against the signature.

The optimizer's own step() is traced into the compiled step (_optimizers,
_optimizer_step: any torch.optim optimizer with a closed-form step).
Hyper-parameters (learning rate, betas, ...) are read from the optimizer's
`param_groups` at every call and passed as arguments wherever the
optimizer takes a tensor, so a learning-rate scheduler works without
recompiling; settings it reads in Python branches (momentum or not,
nesterov, maximize, amsgrad) are part of the compiled step. The step is
traced again (not reused) when such a setting, a module's training mode or
setting
(BatchNorm's eps, Dropout's p, ...), the parameters or which of them
require gradients change between calls. Parameters without a
gradient (unused by the loss, frozen, or outside the optimizer) are left
alone, as torch.optim does.

`compare(model, loss_fn, optimizer, batches, micro_batches=[1, 4, 16])`
trains copies side by side (PyTorch's full-batch step and the compiled step
for each N) and reports loss curves, throughput and memory, with plots and
TensorBoard event files (_compare; `python -m ga_mlir.train` on the command
line).

MLIR locations come from the traced nodes' Python stack traces, reduced to
the user's frames: a step that `--ga-accumulate` refuses raises
`CompileError` whose diagnostics start with the user's file and line.
"""

import numpy  # noqa: F401  (torch-mlir needs it; fail early if missing)

from ._common import CompileError
from ._export import export_train_step
from ._api import compile_train_step, load_step
from ._saved import LoadedTrainStep
from ._step import CompiledTrainStep
from ._compare import compare

__all__ = ["compile_train_step", "CompiledTrainStep", "CompileError",
           "export_train_step", "compare", "load_step", "LoadedTrainStep"]
