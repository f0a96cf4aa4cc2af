"""The checks of compile_train_step's arguments, at the API boundary.

A wrong argument is a TypeError (wrong kind of object) or a ValueError (a
value out of range) that names the argument and what was given, raised before
anything is traced, instead of an error from deep inside the tracer or the
compiler."""

import torch


def _count(name, value):
    """`value` as a count >= 1 (an int, not a bool), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"compile_train_step: {name} must be an int, got "
                        f"{type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"compile_train_step: {name} must be at least 1, "
                         f"got {value}")
    return value


def check_compile_arguments(model, loss_fn, optimizer, example_inputs,
                            micro_batches, micro_batch_size, max_memory,
                            batch_dims=None):
    """Raises TypeError or ValueError for arguments compile_train_step cannot
    take; returns None otherwise."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError("compile_train_step: model must be a "
                        f"torch.nn.Module, got {type(model).__name__}")
    if not callable(loss_fn):
        raise TypeError("compile_train_step: loss_fn must be callable as "
                        "loss_fn(model, *inputs), got "
                        f"{type(loss_fn).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError("compile_train_step: optimizer must be a "
                        "torch.optim.Optimizer, got "
                        f"{type(optimizer).__name__}")
    if isinstance(example_inputs, torch.Tensor) or not isinstance(
            example_inputs, (tuple, list)):
        raise TypeError("compile_train_step: example_inputs must be a tuple "
                        "of tensors (the inputs of one batch), got "
                        f"{type(example_inputs).__name__}")
    if not example_inputs:
        raise ValueError("compile_train_step: example_inputs is empty: the "
                         "step needs at least one per-sample input")
    for i, t in enumerate(example_inputs):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"compile_train_step: example_inputs[{i}] must "
                            f"be a tensor, got {type(t).__name__}")
        if t.dim() == 0:
            raise ValueError(f"compile_train_step: example_inputs[{i}] is a "
                             "0-d tensor: every input needs a batch "
                             "dimension")
    given = [name for name, value in (("micro_batches", micro_batches),
                                      ("micro_batch_size", micro_batch_size),
                                      ("max_memory", max_memory))
             if value is not None]
    if not given:
        raise TypeError("compile_train_step: pass one of micro_batches=, "
                        "micro_batch_size= and max_memory=")
    # Several of them: the compiler's located "contradictory options".
    _count("micro_batches", micro_batches)
    _count("micro_batch_size", micro_batch_size)
    if max_memory is not None:
        if isinstance(max_memory, bool) or not isinstance(
                max_memory, (int, str)):
            raise TypeError("compile_train_step: max_memory must be a number "
                            "of bytes (int) or a string such as '256MiB', "
                            f"got {type(max_memory).__name__}")
        if isinstance(max_memory, int) and max_memory < 1:
            raise ValueError("compile_train_step: max_memory must be "
                             f"positive, got {max_memory}")
    if batch_dims is not None:
        dims = list(batch_dims)
        if len(dims) != len(example_inputs):
            raise ValueError(f"compile_train_step: batch_dims has {len(dims)} "
                             f"entries for {len(example_inputs)} inputs")
        for i, (d, t) in enumerate(zip(dims, example_inputs)):
            if isinstance(d, bool) or not isinstance(d, int):
                raise TypeError(f"compile_train_step: batch_dims[{i}] must "
                                f"be an int, got {type(d).__name__}")
            if not 0 <= d < t.dim():
                raise ValueError(f"compile_train_step: batch_dims[{i}] = {d} "
                                 f"is not a dimension of example_inputs[{i}] "
                                 f"(shape {tuple(t.shape)})")
