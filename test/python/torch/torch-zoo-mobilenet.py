# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 5: torchvision's MobileNetV3-small (depthwise
# convolutions, squeeze-excitation, BatchNorm with recompute_statistics=True,
# the classifier's dropout 0.2 with the compiled step's masks).
# One configuration only (AdamW, N = 4: a remainder): the step takes
# minutes to compile
# (--ga-lower-to-cpu's code for its many BatchNorm layers).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("mobilenet-v3-small", "adamw", 4),
]
# CHECK: mobilenet-v3-small adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
