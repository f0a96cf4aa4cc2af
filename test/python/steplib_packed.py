# RUN: rm -rf %t && env PYTHONPATH=%ga_python_path %python %s %t | FileCheck %s
#
# ga_mlir.steplib calls a library built by ga-compile through its packed
# entry point (_ga_packed_<func>, --ga-emit-packed-interfaces): a step that
# returns one scalar (the wrapper returns it; the entry point stores it at
# the address after the parameters), and one that returns a tensor and a
# scalar (the results structure, first, by pointer). Checked against numpy.

import os
import sys

import numpy as np

from ga_mlir import steplib

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
STEPS = {
    "scalar": """
func.func @train_step(%x: tensor<4xf32>, %s: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %e = tensor.extract %x[%c1] : tensor<4xf32>
  %r = arith.mulf %e, %s : f32
  return %r : f32
}""",
    "tensor": """
func.func @train_step(%x: tensor<4xf32>, %n: i64) -> (tensor<4xf32>, i64) {
  %y = arith.addf %x, %x : tensor<4xf32>
  %c = arith.constant 1 : i64
  %m = arith.addi %n, %c : i64
  return %y, %m : tensor<4xf32>, i64
}""",
}
x = np.array([3, -1.5, 2, 0.25], np.float32)
for name, text in STEPS.items():
    path = os.path.join(work, name + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    lib = steplib.build_library(os.path.join(os.path.dirname(
        steplib.__file__), "..", "..", "bin", "ga-opt"), path, work, name)
    step = steplib.CompiledStep(lib, *steplib.function_type(path))
    out = step(x, 2.5) if name == "scalar" else step(x, 41)
    print(name, [np.asarray(o).tolist() for o in out])
# CHECK: scalar [-3.75]
# CHECK: tensor {{\[\[}}6.0, -3.0, 4.0, 0.5], 42]
