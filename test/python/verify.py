# RUN: env PYTHONPATH=%ga_python_path %python %s %ga_src_root/test/Integration/Inputs/steps %ga_src_root/test/Integration/CPU/Inputs 2>%t.err | FileCheck %s
#
# ga_mlir.verify: verify a rewrite from a script. The report is the dict of
# `ga-verify --json`; a wrong rewrite fails, a step that cannot be verified
# says why, and nothing takes the interpreter down.

import os
import sys

import ga_mlir

steps, inputs = sys.argv[1], sys.argv[2]


def show(report):
    print("pass:", report["pass"], "seeds:", report["seeds"],
          "micro_batches:", report["micro_batches"])
    if "error" in report:
        print("error:", report["error"])
    for result in report["results"]:
        print(f"  #{result['index']} {result['type']} {result['status']}")
    print("// -----")


# A path: the default rewrite ga-accumulate{micro-batches=4} is exact on all
# three input sets.
# CHECK:      pass: True seeds: [0, 1, 2] micro_batches: 4
# CHECK-NEXT:   #0 {{.*}} PASS
# CHECK:      // -----
show(ga_mlir.verify(os.path.join(steps, "linreg_mean.mlir")))

# The text itself, with other options: 3 micro-batches, two seeds from 5.
# CHECK:      pass: True seeds: [5, 6] micro_batches: 3
# CHECK-NOT:  FAIL
# CHECK:      // -----
with open(os.path.join(steps, "mlp_sgd.mlir")) as f:
    show(ga_mlir.verify(f.read(), micro_batches=3, seeds=2, seed=5))

# A wrong rewrite (the gradient normalized by the micro-batch size): the
# parameters differ, the loss does not.
# CHECK:      pass: False seeds: [0, 1, 2] micro_batches: 4
# CHECK-NEXT:   #0 tensor<8xf32> FAIL
# CHECK-NEXT:   #1 tensor<f32> FAIL
# CHECK-NEXT:   #2 tensor<f32> PASS
# CHECK:      // -----
wrong = os.path.join(inputs, "per-micro-batch-mean.transform.mlir")
show(ga_mlir.verify(
    os.path.join(steps, "linreg_mean.mlir"),
    pipeline=f"transform-preload-library{{transform-library-paths={wrong}}},"
             "transform-interpreter"))

# Steps that cannot be verified: the report says why.
# CHECK:      pass: False
# CHECK-NEXT: error: could not parse '<input>'
# CHECK:      // -----
show(ga_mlir.verify("func.func @f( {"))
# CHECK:      pass: False
# CHECK-NEXT: error: invalid pipeline 'builtin.module(no-such-pass)'
# CHECK:      // -----
show(ga_mlir.verify(os.path.join(steps, "linreg_mean.mlir"),
                    pipeline="no-such-pass"))

# A step read from a file is named by its path, not `<input>`.
# CHECK:      pass: False
# CHECK-NEXT: error: could not parse '{{.*}}verify.py'
# CHECK:      // -----
show(ga_mlir.verify(__file__))

# Bad arguments: a ValueError or TypeError at the call.
for bad in (dict(micro_batches=0), dict(micro_batches="4"), dict(seeds=0)):
    try:
        ga_mlir.verify(os.path.join(steps, "linreg_mean.mlir"), **bad)
    except (TypeError, ValueError) as error:
        print(f"{type(error).__name__}: {error}")
# CHECK: ValueError: verify: micro_batches must be at least 1, got 0
# CHECK-NEXT: TypeError: verify: micro_batches must be an int, got str
# CHECK-NEXT: ValueError: verify: seeds must be at least 1, got 0
