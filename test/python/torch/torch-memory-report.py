# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# step.memory_report() of compiled steps (their default CPU options: static
# temporaries, out-parameters, in-place updates) against what the step
# holds when it runs: the argument buffers, the growth of the live heap
# during one call (libGAHeapCount.so, preloaded by re-executing this
# script) and the library's static storage (its .bss, read from the ELF
# file). total_peak is that whole quantity, within 5 %, and every class
# keeps its meaning whatever N is (the momentum buffers are optimizer state
# at N = 1 as at N = 4).

import os
import sys

from ga_mlir import steplib

steplib.preload_heap_counter()

import torch

import zoo
from ga_mlir.torch import compile_train_step

torch.set_num_threads(1)
counter = steplib.HeapCounter()
assert counter.active, "libGAHeapCount.so is not preloaded"
failures = 0


def measure(step, model, optimizer, batch):
    """The peak one call of `step` holds: its arguments (parameters, states,
    batch), the heap growth of the call and the library's static
    storage."""
    step(*batch)  # first call: the states and the 0-d arguments
    arguments = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for s in optimizer.state.values() for t in s.values()
        if torch.is_tensor(t)) + sum(t.nbytes for t in batch)
    counter.reset_peak()
    live = counter.live()
    step(*batch)
    heap = counter.peak() - live
    static = sum(steplib.static_storage_bytes(v.path)
                 for v in step._variants.values())
    return arguments + heap + static, static


def case(name, make_model, make_batch, loss_fn, opt_name, ns):
    global failures
    reports = {}
    for n in ns:
        torch.manual_seed(1)
        model = make_model()
        optimizer = zoo.OPTIMIZERS[opt_name](model)
        batch = make_batch(torch.Generator().manual_seed(2))
        step = compile_train_step(model, loss_fn, optimizer, batch,
                                  micro_batches=n)
        report = step.memory_report()
        measured, static = measure(step, model, optimizer, batch)
        error = (report["total_peak"] - measured) / measured
        ok = abs(error) <= 0.05 and report["static"] > 0 and \
            report["total_peak"] >= report["static"] + report["arguments"]
        failures += not ok
        print(f"{name} N={n}: total_peak {report['total_peak']} measured "
              f"{measured} ({100 * error:+.2f} %), static "
              f"{report['static']} (library {static}) "
              f"{'OK' if ok else 'FAIL'}")
        reports[n] = report
    # The classes of the arguments do not depend on N.
    stable = all(reports[n][k] == reports[ns[0]][k] for n in ns
                 for k in ("parameters", "optimizer_state", "inputs"))
    failures += not stable
    print(f"{name}: argument classes equal for every N: {stable}")


# CHECK: mlp N=1: total_peak {{[0-9]+}} measured {{[0-9]+}} {{.*}} OK
# CHECK: mlp N=4: total_peak {{[0-9]+}} measured {{[0-9]+}} {{.*}} OK
# CHECK: mlp: argument classes equal for every N: True
case("mlp", zoo.MLP, zoo.mlp_batch, zoo.classification_loss, "sgd", (1, 4))
# CHECK: gpt N=1: {{.*}} OK
# CHECK: gpt N=3: {{.*}} OK
# CHECK: gpt: argument classes equal for every N: True
case("gpt", zoo.GPT, zoo.lm_batch, zoo.lm_loss, "adamw", (1, 3))
sys.exit(failures)
