# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 4: torchvision's ResNet-18 with BatchNorm in training
# mode (recompute_statistics=True: exact batch statistics).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("resnet18", "sgd", 3),
    ("resnet18", "adamw", 4),
]
# CHECK: resnet18 sgd N=3: {{.*}} OK
# CHECK: resnet18 adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
