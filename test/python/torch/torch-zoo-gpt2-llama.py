# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The model zoo (model_zoo.py), part 1: transformers' GPT-2 and Llama with
# a padded batch (attention_mask, labels -100 on the padding: a token mean
# over the whole batch), with the default SDPA attention and with
# attn_implementation="eager"; SGD with momentum in N = 3 micro-batches of
# 6 samples, AdamW in N = 4 (a remainder). Criterion (model_zoo.verdict):
# SGD within 1e-4 of PyTorch's float32 step, AdamW no further from the
# float64 step than PyTorch's float32 step: 2x in RMS, 10x at the worst
# element.

import sys

import model_zoo

model_zoo.quiet()
CASES = [
    ("gpt2", "sgd", 3),
    ("gpt2", "adamw", 4),
    ("gpt2-eager", "adamw", 4),
    ("llama", "sgd", 3),
    ("llama-eager", "adamw", 4),
]
# CHECK: gpt2 sgd N=3: {{.*}} OK
# CHECK: gpt2 adamw N=4: {{.*}} OK
# CHECK: gpt2-eager adamw N=4: {{.*}} OK
# CHECK: llama sgd N=3: {{.*}} OK
# CHECK: llama-eager adamw N=4: {{.*}} OK
sys.exit(model_zoo.run(CASES))
