# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Adagrad (lr_decay, initial_accumulator_value: its state exists from
# the constructor), Adadelta, Adamax, ASGD (averaging from step t0 = 3) and
# NAdam (momentum_decay, decoupled weight decay).
# The optimizer's own step() is traced into the compiled step (see
# python/ga_mlir/torch/_optimizers.py); each is checked against PyTorch's
# full-batch step on a tiny MLP at N = 1, 4 and 3 micro-batches (B = 8: a
# remainder for N = 3), 8 steps: loss, parameters and every state tensor
# (optimizer_zoo.py, zoo.check).

import sys

import optimizer_zoo

failures = optimizer_zoo.check(["adagrad", "adadelta", "adamax", "asgd", "nadam"])
# CHECK: tiny adagrad N=1: {{.*}} OK
# CHECK: tiny adagrad N=4: {{.*}} OK
# CHECK: tiny adagrad N=3: {{.*}} OK
# CHECK: tiny adadelta N=1: {{.*}} OK
# CHECK: tiny adadelta N=4: {{.*}} OK
# CHECK: tiny adadelta N=3: {{.*}} OK
# CHECK: tiny adamax N=1: {{.*}} OK
# CHECK: tiny adamax N=4: {{.*}} OK
# CHECK: tiny adamax N=3: {{.*}} OK
# CHECK: tiny asgd N=1: {{.*}} OK
# CHECK: tiny asgd N=4: {{.*}} OK
# CHECK: tiny asgd N=3: {{.*}} OK
# CHECK: tiny nadam N=1: {{.*}} OK
# CHECK: tiny nadam N=4: {{.*}} OK
# CHECK: tiny nadam N=3: {{.*}} OK
sys.exit(failures)
