# RUN: env PYTHONPATH=%ga_python_path %python %s %ga_src_root/test/Integration/Inputs/steps/mlp_adamw.mlir > %t.py.txt
# RUN: ga-verify %ga_src_root/test/Integration/Inputs/steps/mlp_adamw.mlir --seed=3 --seeds=1 --dump-inputs 2> %t.verify.txt || true
# RUN: env PYTHONPATH=%ga_python_path %python %s %ga_src_root/test/Integration/Inputs/steps/mlp_adamw.mlir %t.verify.txt | FileCheck %s
#
# ga_mlir.draw_inputs (mlirGADrawInputs, include/ga-c/Verify.h) draws exactly
# the inputs ga-verify draws: the same values as `ga-verify --dump-inputs`
# for the same seed, per each argument's ga.init / ga.range (AdamW's second
# moments positive, the step counter in [1, 100), labels in [0, 10)), and
# steplib.draw_inputs gives them as numpy arrays. Errors are PipelineError
# with a located diagnostic.

import re
import sys

import numpy as np

import ga_mlir
from ga_mlir import steplib

path = sys.argv[1]
text = open(path).read()

drawn = ga_mlir.draw_inputs(text, "train_step", seed=3, filename=path)
arrays = steplib.draw_inputs(path, seed=3)
# CHECK: 21 arguments
print(len(drawn), "arguments")
# CHECK-NEXT: tensor<16x32xf32> (16, 32) 2048 bytes
print(drawn[0].type, drawn[0].shape, len(drawn[0].data), "bytes")
# CHECK-NEXT: i64 () 8 bytes
print(drawn[12].type, drawn[12].shape, len(drawn[12].data), "bytes")
# CHECK-NEXT: second moments positive: True
print("second moments positive:", all(bool((a > 0).all()) for a in arrays[8:12]))
# CHECK-NEXT: step in [1, 100): True
print("step in [1, 100):", 1 <= int(arrays[12]) < 100)
# CHECK-NEXT: labels in [0, 10): True int64
print("labels in [0, 10):", bool(((arrays[20] >= 0) & (arrays[20] < 10)).all()),
      arrays[20].dtype)

if len(sys.argv) > 2:
    # Every argument's first values against ga-verify's own summary.
    same = True
    for line in open(sys.argv[2]):
        m = re.match(r"seed 3: input #(\d+): .* first=\[([^\]]*)\]", line)
        if not m:
            continue
        first = [float(v) for v in m.group(2).split(",") if v.strip() not in ("", "...")]
        got = arrays[int(m.group(1))].reshape(-1)[:len(first)].astype(np.float64)
        same &= bool(np.allclose(got, first, rtol=1e-5, atol=0))
    # CHECK-NEXT: same as ga-verify: True
    print("same as ga-verify:", same)

# CHECK-NEXT: PipelineError
# CHECK-SAME: error: no func.func named @nosuch
try:
    ga_mlir.draw_inputs(text, "nosuch", filename=path)
except ga_mlir.PipelineError as e:
    print("PipelineError", e.diagnostics[0].splitlines()[0])
# CHECK-NEXT: ValueError draw_inputs: seed must be at least 0, got -1
try:
    ga_mlir.draw_inputs(text, seed=-1)
except ValueError as e:
    print("ValueError", e)
