# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 7: torchvision's Swin Transformer (a small
# configuration: shifted windows made with torch.roll, the attention masks
# of the shifted windows, relative position biases read from their table by
# a buffer of indices, patch merging, stochastic depth 0.2 drawn per sample
# with the compiled step's generator, which the PyTorch steps replay).
# N = 1, and N = 4 on a batch of 6 (a remainder).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("swin", "sgd", 1),
    ("swin", "adamw", 4),
]
# CHECK: swin sgd N=1: {{.*}} OK
# CHECK: swin adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
