# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# RAdam (decoupled weight decay; beta2 = 0.8 rectifies from step 7 on:
# both branches), RMSprop (centered, momentum), Rprop and Lion, an optimizer
# written by the user (optimizer_zoo.Lion), and torch.optim.Muon.
# The optimizer's own step() is traced into the compiled step (see
# python/ga_mlir/torch/_optimizers.py); each is checked against PyTorch's
# full-batch step on a tiny MLP at N = 1, 4 and 3 micro-batches (B = 8: a
# remainder for N = 3), 8 steps: loss, parameters and every state tensor
# (optimizer_zoo.py, zoo.check).

import sys

import optimizer_zoo

failures = optimizer_zoo.check(["radam", "rmsprop", "rprop", "lion"])
# CHECK: tiny radam N=1: {{.*}} OK
# CHECK: tiny radam N=4: {{.*}} OK
# CHECK: tiny radam N=3: {{.*}} OK
# CHECK: tiny rmsprop N=1: {{.*}} OK
# CHECK: tiny rmsprop N=4: {{.*}} OK
# CHECK: tiny rmsprop N=3: {{.*}} OK
# CHECK: tiny rprop N=1: {{.*}} OK
# CHECK: tiny rprop N=4: {{.*}} OK
# CHECK: tiny rprop N=3: {{.*}} OK
# CHECK: tiny lion N=1: {{.*}} OK
# CHECK: tiny lion N=4: {{.*}} OK
# CHECK: tiny lion N=3: {{.*}} OK

# Muon (2-D parameters only: the biases are left out) orthogonalizes its
# update by a Newton-Schulz iteration in bfloat16, as torch.optim does; the
# compiled step's bfloat16 products and norms round differently from
# PyTorch's CPU kernels (which accumulate in float32), and the iteration
# amplifies that: agreement to about 1.5e-2 after 8 steps of lr 2e-2.
failures += optimizer_zoo.check(["muon"], rtol=2e-2, atol=2.5e-2)
# CHECK: tiny muon N=1: {{.*}} OK
# CHECK: tiny muon N=4: {{.*}} OK
# CHECK: tiny muon N=3: {{.*}} OK
sys.exit(failures)
