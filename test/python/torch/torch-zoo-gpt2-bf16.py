# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# transformers' GPT-2 (model_zoo.py: its default SDPA attention, a padded
# batch) under torch.autocast("cpu", dtype=torch.bfloat16): its attention
# mask becomes a bf16 constant of the traced graph, which torch-mlir's
# importer writes through the ml_dtypes package (python/requirements.txt);
# without it the import fails (Llama's too: left out for time). AdamW in
# N = 2 micro-batches of 6 samples. Criterion (model_zoo.verdict): no
# further from the float64 step than PyTorch's own autocast step (2x in RMS,
# 10x at the worst element).

import sys

import torch

import model_zoo

model_zoo.quiet()
# CHECK: gpt2 adamw N=2 autocast: {{.*}} OK
sys.exit(model_zoo.run([("gpt2", "adamw", 2)], autocast=torch.bfloat16))
