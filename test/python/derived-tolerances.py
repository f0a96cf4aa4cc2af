# RUN: rm -rf %t && env PYTHONPATH=%ga_python_path %python %s %ga_src_root %ga_obj_root %t | FileCheck %s
#
# ga-verify's derived tolerance from Python (steplib.derived_tolerances, the
# rule of ga_mlir.tolerance_rule read from the C API), as the GPU kit ships
# it with each corpus step, and the kit's per-element comparison
# (scripts/gpu_kit/run_kit.compare) on the CPU: the rewritten step, built
# ahead of time, is within its tolerance; one element moved by 10 times its
# tolerance fails, by half of it passes.

import os
import sys

import numpy as np

import ga_mlir
from ga_mlir import steplib

src, obj, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "scripts", "gpu_kit"))
import run_kit  # noqa: E402

path = os.path.join(src, "test", "Integration", "Inputs", "steps", "mlp_adamw.mlir")
ga_opt = os.path.join(obj, "bin", "ga-opt")

# CHECK: rule: 16 runs, 2 bounds, 8 spreads
runs, per_bound, per_spread = ga_mlir.tolerance_rule()
print("rule: %d runs, %g bounds, %g spreads" % (runs, per_bound, per_spread))

arg_types, result_types = steplib.function_type(path)
args = [a if t.is_tensor else a.item() for a, t in zip(steplib.draw_inputs(path), arg_types)]
ref = steplib.CompiledStep(steplib.build_library(ga_opt, path, work, "ref"),
                           arg_types, result_types)(*args)
got = steplib.CompiledStep(steplib.build_library(ga_opt, path, work, "ga",
                                                 accumulate="micro-batches=3"),
                           arg_types, result_types)(*args)
tol = steplib.derived_tolerances(ga_opt, path, os.path.join(work, "tolerance"), args, ref)

# CHECK-NEXT: 14 tolerances, float ones finite and >= 0: True
floats = [t for t in tol if t.dtype != np.bool_]
print("%d tolerances, float ones finite and >= 0: %s" % (
    len(tol), all(bool(np.all(np.isfinite(t) & (t >= 0))) for t in floats)))

# CHECK-NEXT: rewritten step: within its tolerance True
ratio, _ = run_kit.compare(got, ref, tol)
print("rewritten step: within its tolerance", ratio <= 1)


def planted(multiple):
    """The reference with element `at` of W2's update moved by `multiple`
    times its tolerance."""
    moved = [np.array(r, copy=True) for r in ref]
    at = np.unravel_index(np.argmax(np.abs(ref[2])), ref[2].shape)
    moved[2][at] += multiple * tol[2][at]
    return run_kit.compare(moved, ref, tol)[0]


# CHECK-NEXT: planted 10x: fails True; planted 0.5x: passes True
print("planted 10x: fails %s; planted 0.5x: passes %s" % (planted(10) > 1, planted(0.5) <= 1))
