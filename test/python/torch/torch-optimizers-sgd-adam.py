# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# SGD (momentum, nesterov, dampening, weight decay, maximize; its momentum
# buffer is created by the first call from the gradient), Adam and AdamW
# (amsgrad, maximize).
# The optimizer's own step() is traced into the compiled step (see
# python/ga_mlir/torch/_optimizers.py); each is checked against PyTorch's
# full-batch step on a tiny MLP at N = 1, 4 and 3 micro-batches (B = 8: a
# remainder for N = 3), 8 steps: loss, parameters and every state tensor
# (optimizer_zoo.py, zoo.check).

import sys

import optimizer_zoo

failures = optimizer_zoo.check(["sgd-nesterov", "sgd-dampening", "sgd-plain", "adam-amsgrad", "adamw-amsgrad"])
# CHECK: tiny sgd-nesterov N=1: {{.*}} OK
# CHECK: tiny sgd-nesterov N=4: {{.*}} OK
# CHECK: tiny sgd-nesterov N=3: {{.*}} OK
# CHECK: tiny sgd-dampening N=1: {{.*}} OK
# CHECK: tiny sgd-dampening N=4: {{.*}} OK
# CHECK: tiny sgd-dampening N=3: {{.*}} OK
# CHECK: tiny sgd-plain N=1: {{.*}} OK
# CHECK: tiny sgd-plain N=4: {{.*}} OK
# CHECK: tiny sgd-plain N=3: {{.*}} OK
# CHECK: tiny adam-amsgrad N=1: {{.*}} OK
# CHECK: tiny adam-amsgrad N=4: {{.*}} OK
# CHECK: tiny adam-amsgrad N=3: {{.*}} OK
# CHECK: tiny adamw-amsgrad N=1: {{.*}} OK
# CHECK: tiny adamw-amsgrad N=4: {{.*}} OK
# CHECK: tiny adamw-amsgrad N=3: {{.*}} OK
sys.exit(failures)
