# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# compile_train_step(max_memory=...): N is the smallest number of
# micro-batches whose total peak fits the budget. The peaks come from an
# independent run of --ga-memory-report for every N of the exported step
# in the library's form (rewritten, the new parameters and states written
# into their arguments by --ga-write-results-in-place), bufferized as the
# library is (its CPU options: static temporaries included, and buffers
# shared, as max_memory= lowers it), plus what a call allocates to return
# the loss (PyTorch's tensor, measured by the frontend: memory_report()'s
# `returned`, which max_memory= keeps out of the budget);
# for budgets equal to a peak and between two peaks, the chosen N fits and
# N - 1 does not, and the compiled step still equals PyTorch's full-batch
# step. Budgets no N fits and contradictory options raise CompileError with
# the pass's message, located at the user's model.

import json
import os
import sys
import tempfile

import torch

import zoo
from ga_mlir import run_pipeline
from ga_mlir.torch import CompileError, compile_train_step, \
    export_train_step
from ga_mlir.torch._budget import _returned_bytes
from ga_mlir.torch._options import library_cpu_options


# The returned loss tensor's bytes (a 0-d float32), as the frontend
# measures them.
RETURNED = _returned_bytes([((), torch.float32)], False)


def pass_options(options):
    """The CPU library's lowering options as the text of --ga-lower-to-cpu's
    options (the same names, with dashes)."""
    return " ".join(
        f"{k.replace('_', '-')}={int(v) if isinstance(v, bool) else v}"
        for k, v in sorted(library_cpu_options(options).items()))


failures = 0


def static_peaks(make_model, make_batch, loss_fn, opt_name,
                 recompute="none"):
    """{N: total peak} of --ga-memory-report for N = 1..B with the
    recompute set `recompute`, in the library's form: the step's results
    (new parameters, then new states) written into its arguments
    (parameters, then states; these models have no buffers)."""
    torch.manual_seed(1)
    model = make_model()
    opt = zoo.OPTIMIZERS[opt_name](model)
    batch = make_batch(torch.Generator().manual_seed(2))
    ir, spec = export_train_step(model, loss_fn, opt, batch)
    first = spec.arg_count() - len(batch)
    params, states = len(spec.params), sum(spec.num_states)
    pairs = [f"{i}:{i}" for i in range(params + states)]
    peaks = {}
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "report.json")
        for n in range(1, batch[0].shape[0] + 1):
            run_pipeline(
                ir, "builtin.module(ga-mark-batch-args{batch-args=" +
                ",".join(f"{first + i}:0" for i in range(len(batch))) +
                f"}},ga-accumulate{{micro-batches={n} "
                f"recompute={recompute}}},ga-write-results-in-place{{"
                f"func=train_step pairs={','.join(pairs)}}},"
                f"ga-memory-report{{func=train_step_in_place format=json "
                f"output={out} "
                f"cpu={{{pass_options({'share_buffers': True})}}}}})")
            with open(out) as f:
                peaks[n] = json.load(f)[0]["total_peak"] + RETURNED
    return peaks


def budgets(peaks):
    """(budget, expected N): for each N whose peak is below every smaller
    N's, the peak itself and a budget half-way to the next larger peak."""
    out = []
    for n in sorted(peaks)[1:]:
        above = min(peaks[k] for k in peaks if k < n)
        if peaks[n] < above:
            out += [(peaks[n], n), ((peaks[n] + above) // 2, n)]
    return out


def check_budgets(name, make_model, make_batch, loss_fn, opt_name, limit):
    global failures
    peaks = static_peaks(make_model, make_batch, loss_fn, opt_name)
    chosen = budgets(peaks)[:limit]
    for budget, expected in chosen:
        torch.manual_seed(1)
        model = make_model()
        # recompute="none" fixes the set: N alone is chosen.
        step = compile_train_step(
            model, loss_fn, zoo.OPTIMIZERS[opt_name](model),
            make_batch(torch.Generator().manual_seed(2)), max_memory=budget,
            recompute="none")
        n = step.chosen_micro_batches()
        fits = peaks[n] <= budget
        smaller_fits = any(peaks[k] <= budget for k in peaks if k < n)
        ok = n == expected and fits and not smaller_fits
        failures += not ok
        print(f"{name} max_memory={budget}: N = {n}; report: N fits {fits}, "
              f"a smaller N fits {smaller_fits} "
              f"{'OK' if ok else 'FAIL expected N = %d' % expected}")
        # The step with that N equals PyTorch's full-batch step.
        failures += zoo.check(f"{name}-{budget}", make_model, make_batch,
                              loss_fn, optimizers=(opt_name,), ns=(n,),
                              max_memory=budget, recompute="none")
    return peaks


# CHECK: mlp max_memory={{[0-9]+}}: N = {{[0-9]+}}; report: N fits True, a smaller N fits False OK
# CHECK: mlp-{{[0-9]+}} adamw N={{[0-9]+}}: {{.*}} OK
peaks = check_budgets("mlp", zoo.MLP, zoo.mlp_batch, zoo.classification_loss,
                      "adamw", 4)
# CHECK: cnn max_memory={{[0-9]+}}: N = {{[0-9]+}}; report: N fits True, a smaller N fits False OK
# CHECK: cnn-{{[0-9]+}} sgd N={{[0-9]+}}: {{.*}} OK
check_budgets("cnn", zoo.CNN, zoo.cnn_batch, zoo.classification_loss, "sgd",
              2)

# Strings with a unit: the full batch's peak fits N = 1; one byte less
# does not without recomputation: a larger N, or N = 1 with recomputation.
torch.manual_seed(1)
model = zoo.MLP()
opt = zoo.OPTIMIZERS["adamw"](model)
batch = zoo.mlp_batch(torch.Generator().manual_seed(2))
for text in ("1GiB", f"{peaks[1]}B", f"{-(-peaks[1] // 1024)}KiB",
             peaks[1] - 1):
    chosen = compile_train_step(model, zoo.classification_loss, opt, batch,
                                max_memory=text).chosen_configuration()
    n = chosen["micro_batches"]
    if chosen["recompute"] != "none" or n > 1:
        n = f"{n} (recompute {chosen['recompute']})"
    # CHECK: string 1GiB: N = 1{{$}}
    # CHECK: string {{[0-9]+}}B: N = 1{{$}}
    # CHECK: string {{[0-9]+}}KiB: N = 1{{$}}
    # CHECK: string {{[0-9]+}}: N = {{[0-9]+}} (recompute {{none|pointwise|attention|products|layers}})
    print(f"string {text}: N = {n}")


def refused(name, **options):
    global failures
    try:
        compile_train_step(model, zoo.classification_loss, opt, batch,
                           **options)
        failures += 1
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        print(f"{name}: " + " | ".join(str(error).splitlines()))


# The error names the smallest peak, at the model's line (zoo.py).
# CHECK: too-small: ga-mlir could not choose the number of micro-batches: | {{.*}}zoo.py:{{[0-9]+}}: error: no number of micro-batches brings the step's peak memory under max_memory: {{.*}}(ga-mlir: no number of micro-batches fits max-memory=1KiB: the smallest static peak is {{.*}} with N = {{[0-9]+}}
refused("too-small", max_memory="1KiB")
# micro_batches= with max_memory= fixes N; the recompute set is chosen.
step = compile_train_step(model, zoo.classification_loss, opt, batch,
                          micro_batches=2, max_memory="1MiB")
# CHECK: fixed N: N = 2, recompute {{none|pointwise|attention|products|layers}}
print(f"fixed N: N = {step.chosen_micro_batches()}, recompute "
      f"{step.chosen_configuration()['recompute']}")

# N and the recompute set chosen together: for budgets from the peak of
# N = 1 without recomputation down to the smallest reachable one, the
# choice fits by an independent report with its set, its predicted peak is
# that report's, and a smaller budget never gives a larger peak.
with_set = {r: static_peaks(zoo.MLP, zoo.mlp_batch, zoo.classification_loss,
                            "adamw", r)
            for r in ("none", "pointwise", "attention", "products", "layers")}
lowest = min(min(p.values()) for p in with_set.values())
previous, monotone, fits = None, True, True
for k in range(5):
    budget = peaks[1] - (peaks[1] - lowest) * k // 4
    step = compile_train_step(model, zoo.classification_loss, opt, batch,
                              max_memory=budget)
    c = step.chosen_configuration()
    report = with_set[c["recompute"]][c["micro_batches"]]
    fits &= report == c["predicted_peak"] <= budget
    monotone &= previous is None or report <= previous
    previous = report
    print(f"joint max_memory={budget}: N = {c['micro_batches']}, "
          f"recompute {c['recompute']}, peak {report}, extra work "
          f"{c['recompute_work']}")
failures += not (fits and monotone)
# CHECK: joint max_memory={{[0-9]+}}: N = 1,
# CHECK: joint: fits True, monotone True
print(f"joint: fits {fits}, monotone {monotone}")
# CHECK: contradiction-size: {{.*}} error: give only one of {{.*}}(ga-mlir: contradictory options micro-batch-size=4, max-memory=1MiB
refused("contradiction-size", micro_batch_size=4, max_memory="1MiB")
# CHECK: unit: {{.*}} error: max_memory= must be a number of bytes or a string such as '256MiB' {{.*}}(ga-mlir: invalid max-memory '12XB': expected a number of bytes
refused("unit", max_memory="12XB")
try:
    compile_train_step(model, zoo.classification_loss, opt, batch,
                       max_memory=1.5)
except TypeError as error:
    # CHECK: float: compile_train_step: max_memory must be a number of bytes (int) or a string such as '256MiB', got float
    print(f"float: {error}")
sys.exit(failures)
