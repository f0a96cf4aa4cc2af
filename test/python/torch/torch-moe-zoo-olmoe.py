# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The MoE zoo (moe_models.zoo_case: transformers' model, one layer, 4
# experts, top-2, its default grouped-product experts): OLMoE (top-k
# weights not renormalized) without output_router_logits, AdamW, N = 1
# (the rewrite with one micro-batch).
# Against PyTorch's own full-batch step by the zoo's rule (model_zoo.verdict),
# two steps on two batches of 8 padded sequences (other routings, other
# group sizes: the trace reads them as data). The sort of the token-expert
# pairs across the batch is left out of the trace (_permutation.py), each
# micro-batch's rows meet their own experts (ga.grouped_matmul group_ids).

import sys

import model_zoo
import moe_models

model_zoo.quiet()
model_zoo.MODELS["olmoe"] = moe_models.zoo_case(
    "olmoe", router_logits=False)
# CHECK: olmoe adamw N=1: {{.*}} OK
sys.exit(model_zoo.run([("olmoe", "adamw", 1)], batch=8))
