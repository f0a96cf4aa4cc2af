# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 4: torchvision's ResNet-18 with BatchNorm in training
# mode (recompute_statistics=True: exact batch statistics).
# One configuration only (SGD with momentum, N = 4: a remainder): the step
# takes minutes to compile
# (--ga-lower-to-cpu's code for its many BatchNorm layers).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("resnet18", "sgd", 4),
]
# CHECK: resnet18 sgd N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
