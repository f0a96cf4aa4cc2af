"""The derived rounding-error bounds against an independent oracle.

For every step of the corpus and several input sets (drawn as ga-verify draws
them), three ahead-of-time libraries: the step as written (float32), its
error-bound function (`--ga-forward-error-bound`: the same results and a
bound per element), and the step's float64 copy (every f32 made f64), whose
results stand for the exact ones (a float64 run is 2^29 times closer to
them). Checked, per float result element:

    |float32 - float64| <= bound        (the bound bounds the actual error)

for the error-bound function's own results and for the step's (lowered on
its own, its sums may run in another order: the bound holds for every
order). Integer results must equal the float64 copy's wherever the bound
does not flag them.
The tightness (largest and median ratio of error to bound) is printed: a
bound that is too loose would hide wrong rewrites in ga-verify.

    error_bound_oracle.py --bin BUILD/bin --steps DIR --work DIR [--seeds 0,1]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
from float64 import float64_copy  # noqa: E402

import ga_mlir  # noqa: E402
from ga_mlir import steplib  # noqa: E402

# Steps the float64 copy cannot serve as the exact result of.
SKIPPED = {
    "bf16_mlp": "computes in bf16: its float64 copy keeps the bf16 roundings",
    "dynamic_batch": "a dynamic batch: the libraries take static shapes here",
}
# The float64 copy's own error, relative to the float32 bound it is compared
# with (2^-29 of it, rounded up generously).
F64_SLACK = 1e-6


def build(ga_opt, work, name, text, func):
    path = os.path.join(work, name + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    lib = steplib.build_library(ga_opt, path, work, name)
    return steplib.CompiledStep(lib, *steplib.function_type(path, func), func=func)


def check_step(args, name, path):
    """Returns the number of violations of `name`, printing one line per
    input set."""
    with open(path) as f:
        text = f.read()
    bound_text = ga_mlir.run_pipeline(
        text, "builtin.module(inline,ga-forward-error-bound{func=train_step})", filename=path)
    ga_opt = os.path.join(args.bin, "ga-opt")
    plain = build(ga_opt, args.work, name, text, "train_step")
    bounded = build(ga_opt, args.work, name + "-bound", bound_text, "train_step_error_bound")
    exact = build(ga_opt, args.work, name + "-f64", float64_copy(text), "train_step")
    violations = 0
    for seed in args.seeds:
        inputs = steplib.draw_inputs(path, seed=seed)
        inputs64 = [a.astype(np.float64) if a.dtype == np.float32 else a for a in inputs]
        values = plain(*inputs)
        out = bounded(*inputs)
        n = len(out) // 2
        ref = exact(*inputs64)
        worst, ratios, undetermined, bad = 0.0, [], 0, 0
        for v, w, e, x in zip(out[:n], values, out[n:], ref):
            v, w, e, x = np.asarray(v), np.asarray(w), np.asarray(e), np.asarray(x)
            if v.dtype.kind != "f":
                flagged = e.astype(bool)
                bad += int(np.count_nonzero((v != x) & ~flagged))
                bad += int(np.count_nonzero((w != x) & ~flagged))
                continue
            err = np.maximum(np.abs(v.astype(np.float64) - x), np.abs(w.astype(np.float64) - x))
            bound = e.astype(np.float64)
            finite = np.isfinite(bound)
            undetermined += int(np.count_nonzero(~finite))
            allowed = bound * (1 + F64_SLACK) + F64_SLACK * np.abs(x) * np.finfo(np.float32).eps
            bad += int(np.count_nonzero(finite & (err > allowed)))
            positive = finite & (bound > 0)
            if positive.any():
                r = err[positive] / bound[positive]
                worst = max(worst, float(r.max()))
                ratios.append(r)
        median = float(np.median(np.concatenate(ratios))) if ratios else 0.0
        status = "PASS" if bad == 0 else "FAIL"
        print("%s %s seed %d: err/bound max %.3g median %.3g, %d undetermined, "
              "%d violations" % (status, name, seed, worst, median, undetermined, bad))
        violations += bad
    return violations


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--steps", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--seeds", default="0,1", type=lambda s: [int(x) for x in s.split(",")])
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    total = 0
    for entry in sorted(os.listdir(args.steps)):
        if not entry.endswith(".mlir"):
            continue
        name = entry[:-len(".mlir")]
        if name in SKIPPED:
            print("skip %s: %s" % (name, SKIPPED[name]))
            continue
        total += check_step(args, name, os.path.join(args.steps, entry))
    print("%d violations" % total)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
