# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A batch in which an expert receives no token: Mixtral with one expert per
# token whose router ties the last expert with the one before
# (moe_models.empty_expert_mixtral), so the last expert's group is empty in
# every batch and micro-batch, SGD with momentum, N = 4, against PyTorch's
# own full-batch step by the zoo's rule (model_zoo.verdict), two steps on
# two batches. The expert's weights get no gradient; the weight decay and
# momentum still move them, as in PyTorch.

import sys

import torch

import model_zoo
import moe_models

model_zoo.quiet()
model_zoo.MODELS["mixtral-empty-expert"] = model_zoo.Case(
    moe_models.empty_expert_mixtral, model_zoo.padded_text,
    model_zoo.hf_loss)

# The example batch of model_zoo.compare leaves the last expert empty.
# CHECK: last expert's tokens: 0 of 64
torch.manual_seed(0)
model = moe_models.empty_expert_mixtral()
ids, mask, _ = model_zoo.padded_text(torch.Generator().manual_seed(1), 8)
counts = moe_models.expert_counts(model, ids, mask)
print(f"last expert's tokens: {counts[-1]} of {sum(counts)}")

# CHECK: mixtral-empty-expert sgd N=4: {{.*}} OK
sys.exit(model_zoo.run([("mixtral-empty-expert", "sgd", 4)], batch=8))
