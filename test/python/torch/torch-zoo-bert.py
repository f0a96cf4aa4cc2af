# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo, part 2: transformers' BERT (eager attention, a padding
# mask and dropout 0.1 in training mode: PyTorch's step applies the compiled
# step's masks, computed independently) and DistilBERT (SDPA, padding).

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("bert-dropout", "sgd", 3),
    ("bert-dropout", "adamw", 4),
    ("distilbert", "sgd", 3),
    ("distilbert", "adamw", 4),
]
# CHECK: bert-dropout sgd N=3: {{.*}} OK
# CHECK: bert-dropout adamw N=4: {{.*}} OK
# CHECK: distilbert sgd N=3: {{.*}} OK
# CHECK: distilbert adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
