# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 9: torchvision's Swin Transformer V2 blocks (the
# configuration of torch-zoo-swin.py with cosine attention, the position
# bias MLP and the key bias zeroed in place on a clone, whose backward is
# an as_strided_scatter). One configuration: AdamW, N = 4 on a batch of 6
# (a remainder).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("swin-v2", "adamw", 4),
]
# CHECK: swin-v2 adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
