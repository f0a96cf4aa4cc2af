# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# An MLP (Linear, ReLU, Tanh) with cross-entropy, SGD with momentum and
# weight decay, and AdamW: the compiled step in N micro-batches (B = 10: a
# remainder for N = 3 and 4) against PyTorch's full-batch step, 3 steps in a
# row (parameters, optimizer state, loss; in-place update).

import sys

import zoo

failures = zoo.check("mlp", zoo.MLP, zoo.mlp_batch, zoo.classification_loss)
# CHECK: mlp sgd N=1: {{.*}} OK
# CHECK: mlp sgd N=3: {{.*}} OK
# CHECK: mlp sgd N=4: {{.*}} OK
# CHECK: mlp adamw N=1: {{.*}} OK
# CHECK: mlp adamw N=3: {{.*}} OK
# CHECK: mlp adamw N=4: {{.*}} OK
sys.exit(failures)
