# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# compile_train_step(max_memory=...) against what the chosen step holds
# when it runs (the argument buffers, the growth of the live heap during
# one call by libGAHeapCount.so, preloaded by re-executing this script,
# and the library's static storage), on a small CNN (B = 4: activations
# larger than the parameters) for budgets from the peak of N = 1 without
# recomputation (share_buffers=True, as a budget compiles) to that of
# N = B:
# * the planner's predicted peak is the memory report of the step it
#   chose (both measure the library's form: results written in place);
# * the prediction is within 5 % of the measured peak, the measured peak
#   is within the budget, with no allowance, and never rises as the budget
#   falls: the loss tensor the frontend returns (PyTorch's tensor object
#   and storage, about 300 bytes where the library's buffer is 4) is the
#   report's `returned`, measured by the same counter at compile time,
#   inside total_peak and kept out of the budget;
# * at 100 % the N = 1 step that defines the budget is chosen;
# * micro_batches=N with max_memory fixes N (the set is chosen);
#   recompute="none" with max_memory chooses only N: the smallest N whose
#   report fits.

import os
import sys

from ga_mlir import steplib

steplib.preload_heap_counter()

import torch

import zoo
from ga_mlir.torch import CompileError, compile_train_step

torch.set_num_threads(1)
counter = steplib.HeapCounter()
assert counter.active, "libGAHeapCount.so is not preloaded"
failures = 0
batch = zoo.cnn_batch(torch.Generator().manual_seed(2), b=4)


def compiled(**options):
    torch.manual_seed(1)
    model = zoo.CNN()
    opt = zoo.OPTIMIZERS["adamw"](model)
    return model, opt, compile_train_step(model, zoo.classification_loss,
                                          opt, batch, **options)


def measure(step, model, optimizer):
    """What one steady-state call of `step` holds: its arguments, the heap
    growth of the call and the library's static storage."""
    step(*batch)  # the optimizer state exists from now on
    arguments = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for s in optimizer.state.values() for t in s.values()
        if torch.is_tensor(t)) + sum(t.nbytes for t in batch)
    return counter.step_peak(step, lambda: step(*batch), arguments)[1]


def check(name, budget, **options):
    """Compiles under `budget`, prints the choice against the report and
    the measurement; returns (N, set, measured) or None (nothing fits)."""
    global failures
    try:
        model, opt, step = compiled(max_memory=budget, **options)
    except CompileError as error:
        fits_none = "the smallest budget that fits is" in str(error)
        failures += not fits_none
        print(f"{name}: nothing fits {'OK' if fits_none else error}")
        return None
    c = step.chosen_configuration()
    report = step.memory_report()["total_peak"]
    measured = measure(step, model, opt)
    error = (c["predicted_peak"] - measured) / measured
    returned = step.memory_report().get("returned", 0)
    ok = c["predicted_peak"] == report and returned > 0 and \
        measured <= budget and abs(error) <= 0.05
    failures += not ok
    print(f"{name}: N = {c['micro_batches']}, recompute {c['recompute']}, "
          f"predicted {c['predicted_peak']}, report {report}, measured "
          f"{measured} ({100 * error:+.2f} %), returned {returned} "
          f"{'OK' if ok else 'FAIL'}")
    return c["micro_batches"], c["recompute"], measured


def report(n):
    return compiled(micro_batches=n, share_buffers=True)[2].memory_report()[
        "total_peak"]


top, low = report(1), report(len(batch[0]))
# CHECK: budget top: N = 1, recompute none, {{.*}} OK
# CHECK: budget middle: N = {{[0-9]+}}, {{.*}} OK
# CHECK: budget low: N = {{[0-9]+}}, {{.*}} OK
previous, monotone = None, True
for name, budget in (("top", top), ("middle", (top + low) // 2),
                     ("low", low)):
    chosen = check(f"budget {name}", budget)
    if chosen:
        monotone &= previous is None or chosen[2] <= previous
        previous = chosen[2]
failures += not monotone
# CHECK: monotone True
print(f"monotone {monotone}")

# N fixed, the set chosen.
# CHECK: fixed N: N = 2, recompute {{none|pointwise|attention|products|layers}}, {{.*}} OK
fixed = check("fixed N", top, micro_batches=2)
failures += fixed is None or fixed[0] != 2

# The set fixed, N chosen: the smallest N whose report fits.
budget = (top + low) // 2
# CHECK: set none: N = {{[0-9]+}}, recompute none, {{.*}} OK
n, recompute, _ = check("set none", budget, recompute="none")
smaller = n > 1 and (top if n == 2 else report(n - 1)) > budget
failures += recompute != "none" or not smaller
# CHECK: set none: N - 1 does not fit True
print(f"set none: N - 1 does not fit {smaller}")
sys.exit(failures)
