# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 6: torchvision's ConvNeXt (a small configuration:
# depthwise 7x7 convolutions, LayerNorm2d, layer scale).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("convnext", "sgd", 3),
    ("convnext", "adamw", 4),
]
# CHECK: convnext sgd N=3: {{.*}} OK
# CHECK: convnext adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
