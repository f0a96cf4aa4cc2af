"""Compares --ga-memory-report with the heap measured while the compiled step
runs, for the training steps of the corpus and several N.

    check_peaks.py --build BUILD --steps DIR --work DIR [--n 1,2,4] [--tolerance 0.1]
                   [--markdown] [--max-memory] [--cpu 'blas=1']

For each step and N: the static total peak of `--ga-memory-report="sweep=N
format=json"`; the step rewritten with N micro-batches and built by the
README's ahead-of-time recipe; the library called in a child process with
libGAHeapCount.so preloaded: measured peak = the bytes of the argument buffers
plus the growth of the live heap during the call (its own allocations, the
returned buffers included) plus the library's static storage (its `.bss`,
where static-temporaries=1 puts the temporaries). Fails when a measured peak differs from the
report by more than the tolerance. With --max-memory, also checks for each
step that `--ga-accumulate="max-memory=<budget>"` chooses the smallest N that
fits a budget, by the report and by measurement.
"""

import argparse
import json
import os
import subprocess
import sys

# The steps of the corpus and the --ga-accumulate options they need; the
# refused step (contrastive) and the dynamic batch (no static size) are left
# out.
STEPS = {
    "linreg_mean": "", "mlp_sgd": "", "mlp_momentum": "", "mlp_adamw": "",
    "masked_tokens": "", "metrics": "", "batch_dim1": "", "transformer_block": "",
    "bf16_mlp": "", "layernorm_regression": "", "two_inputs_i32": "",
    "batchnorm_mlp": "recompute-statistics=1",
}


CPU_OPTIONS = ""
# More --ga-accumulate options for every step (e.g. recompute=products).
ACCUMULATE_OPTIONS = ""


def report(build, path, n, options):
    options = f"{options} {ACCUMULATE_OPTIONS}".strip()
    acc = f" accumulate={{{options}}}" if options else ""
    acc += f" cpu={{{CPU_OPTIONS}}}" if CPU_OPTIONS else ""
    out = subprocess.run([f"{build}/bin/ga-opt", path, f"--ga-memory-report=sweep={n} format=json{acc}",
                          "-o", "/dev/null"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)[0]["total_peak"]


def measure(build, path, n, options, work):
    """The measured peak of one call of the step rewritten with N."""
    sys.path.insert(0, os.path.join(build, "python_packages"))
    from ga_mlir import steplib
    name = f"{os.path.basename(path)[:-5]}_n{n}"
    acc = f"micro-batches={n} {options} {ACCUMULATE_OPTIONS}".strip()
    lib = steplib.build_library(f"{build}/bin/ga-opt", path, work, name, accumulate=acc,
                                cpu_options=CPU_OPTIONS)
    env = dict(os.environ, LD_PRELOAD=steplib.heap_count_library(),
               PYTHONPATH=os.path.join(build, "python_packages"))
    out = subprocess.run([sys.executable, __file__, "--worker", lib, "--step", path, "--build", build],
                         check=True, capture_output=True, text=True, env=env).stdout
    # The heap the call uses, and the static storage the library holds
    # (static-temporaries=1): both are part of the peak.
    return int(out.strip().splitlines()[-1]) + steplib.static_storage_bytes(lib)


def worker(args):
    """Child process: call the library once on zero inputs and print its peak."""
    import numpy as np
    from ga_mlir import steplib
    arg_types, result_types = steplib.function_type(args.step)
    step = steplib.CompiledStep(args.worker, arg_types, result_types)
    values = [np.zeros(t.shape, t.dtype) if t.is_tensor else 0 for t in arg_types]
    counter = steplib.HeapCounter()
    assert counter.active, "libGAHeapCount.so is not preloaded"
    step(*values)  # first call: lazy binding, libm, OpenBLAS set-up
    _, peak = counter.measure_call(step, values)
    print(peak)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build")
    p.add_argument("--steps")
    p.add_argument("--work")
    p.add_argument("--n", default="1,2,4")
    p.add_argument("--tolerance", type=float, default=0.10)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--max-memory", action="store_true")
    p.add_argument("--only", default="", help="comma-separated steps (default: all)")
    p.add_argument("--cpu", default="", help="--ga-lower-to-cpu options of the report and the build")
    p.add_argument("--accumulate", default="",
                   help="more --ga-accumulate options for every step (e.g. recompute=products)")
    p.add_argument("--worker")
    p.add_argument("--step")
    args = p.parse_args()
    if args.worker:
        return worker(args)
    global CPU_OPTIONS, ACCUMULATE_OPTIONS
    CPU_OPTIONS = args.cpu
    ACCUMULATE_OPTIONS = args.accumulate

    steps = {k: v for k, v in STEPS.items() if not args.only or k in args.only.split(",")}
    failures = 0
    rows = []
    for name, options in steps.items():
        path = os.path.join(args.steps, name + ".mlir")
        for n in [int(x) for x in args.n.split(",")]:
            static = report(args.build, path, n, options)
            measured = measure(args.build, path, n, options, args.work)
            error = (measured - static) / measured
            ok = abs(error) <= args.tolerance
            failures += not ok
            rows.append((name, n, static, measured, error, ok))
    if args.markdown:
        print("| step | N | static peak (bytes) | measured peak (bytes) | difference |")
        print("| --- | --- | --- | --- | --- |")
        for name, n, static, measured, error, ok in rows:
            print(f"| {name} | {n} | {static} | {measured} | {100 * error:+.2f} % |")
    else:
        for name, n, static, measured, error, ok in rows:
            print(f"{'OK' if ok else 'MISMATCH'}: {name} N={n} static {static} measured {measured} "
                  f"({100 * error:+.2f} %)")

    if args.max_memory:
        for name, options in steps.items():
            failures += not check_max_memory(args, name, options)
    print(f"{failures} failures")
    return 1 if failures else 0


def check_max_memory(args, name, options):
    """A budget between the peaks of N = 2 and N = 3: the chosen N must fit
    it and N - 1 must not, by the report and by measurement."""
    path = os.path.join(args.steps, name + ".mlir")
    budget = (report(args.build, path, 2, options) + report(args.build, path, 3, options)) // 2
    # recompute=none: N alone is chosen (the recompute set is fixed).
    acc = f"max-memory={budget} recompute=none {options}".strip()
    res = subprocess.run([f"{args.build}/bin/ga-opt", path, f"--ga-accumulate={acc}", "-mlir-pass-statistics",
                          "-o", "/dev/null"], capture_output=True, text=True)
    chosen = subprocess.run([f"{args.build}/bin/ga-opt", path,
                             f"--ga-choose-micro-batches=max-memory={budget} recompute=none "
                             f"accumulate={{{options}}}"],
                            check=True, capture_output=True, text=True).stdout
    n = int(chosen.split("ga.micro_batches = ")[1].split(" ")[0])
    fits = report(args.build, path, n, options) <= budget
    before = n == 1 or report(args.build, path, n - 1, options) > budget
    m_fits = measure(args.build, path, n, options, args.work) <= budget
    m_before = n == 1 or measure(args.build, path, n - 1, options, args.work) > budget
    ok = res.returncode == 0 and fits and before and m_fits and m_before
    print(f"{'OK' if ok else 'MISMATCH'}: {name} max-memory={budget}: N = {n}; fits: report {fits}, "
          f"measured {m_fits}; N - 1 does not: report {before}, measured {m_before}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
