# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Adafactor, traced from its own step(): it reads its step count and the
# norms of the parameter and of the update with .item() and computes with
# them in Python (min, max, **), which the optimizer's trace keeps as 0-d
# float64 tensors (python/ga_mlir/torch/_traced_numbers.py). Default
# settings, then weight decay, another beta2_decay and maximize; Tiny's
# weights take its factored path (row and column variances), its biases the
# unfactored one. Each is checked against PyTorch's full-batch step at N =
# 1, 4 and 3 micro-batches (B = 8: a remainder for N = 3), 8 steps: loss,
# parameters and every state tensor (optimizer_zoo.py, zoo.check).

import sys

import torch

import optimizer_zoo

failures = optimizer_zoo.check(["adafactor", "adafactor-decay"])
# CHECK: tiny adafactor N=1: {{.*}} OK
# CHECK: tiny adafactor N=4: {{.*}} OK
# CHECK: tiny adafactor N=3: {{.*}} OK
# CHECK: tiny adafactor-decay N=1: {{.*}} OK
# CHECK: tiny adafactor-decay N=4: {{.*}} OK
# CHECK: tiny adafactor-decay N=3: {{.*}} OK

# The traced max/min/float live in the optimizer module's globals only while
# its step is traced.
module = vars(sys.modules[torch.optim.Adafactor.__module__])
print("builtins restored:", [n for n in ("max", "min", "float")
                             if n in module])
# CHECK: builtins restored: []
sys.exit(failures)
