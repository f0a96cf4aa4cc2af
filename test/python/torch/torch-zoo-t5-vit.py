# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 3: transformers' T5 (encoder-decoder, padding,
# labels -100) and ViT, torchvision's VisionTransformer; the latter also
# under torch.autocast("cpu", dtype=torch.bfloat16) in the loss function
# (criterion: as close to the float64 step as PyTorch's autocast step).

import sys

import torch

import model_zoo

model_zoo.quiet()
CASES = [
    ("t5", "sgd", 3),
    ("t5", "adamw", 4),
    ("vit-hf", "sgd", 3),
    ("vit-hf", "adamw", 4),
    ("vit-torchvision", "sgd", 3),
    ("vit-torchvision", "adamw", 4),
]
# CHECK: t5 sgd N=3: {{.*}} OK
# CHECK: t5 adamw N=4: {{.*}} OK
# CHECK: vit-hf sgd N=3: {{.*}} OK
# CHECK: vit-hf adamw N=4: {{.*}} OK
# CHECK: vit-torchvision sgd N=3: {{.*}} OK
# CHECK: vit-torchvision adamw N=4: {{.*}} OK
# CHECK: vit-torchvision sgd N=4 autocast: {{.*}} OK
failures = model_zoo.run(CASES)
failures += model_zoo.run([("vit-torchvision", "sgd", 4)],
                          autocast=torch.bfloat16)
sys.exit(failures)
