# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 8: torchvision's SqueezeNet 1.1 (Fire modules, max
# pooling with ceil_mode=True, the classifier's dropout 0.5 with the
# compiled step's masks, which the PyTorch steps replay) on 64 x 64 images.
# N = 1, and N = 4 on a batch of 6 (a remainder).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("squeezenet1_1", "sgd", 1),
    ("squeezenet1_1", "adamw", 4),
]
# CHECK: squeezenet1_1 sgd N=1: {{.*}} OK
# CHECK: squeezenet1_1 adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
