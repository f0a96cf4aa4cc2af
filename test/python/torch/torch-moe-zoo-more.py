# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# More of transformers' mixtures of experts (moe_models.zoo_case: random
# initialization, 4 experts, top-2), each against PyTorch's own full-batch
# step by the zoo's rule (model_zoo.verdict: two SGD steps with momentum on
# two batches of 8 padded sequences, N = 4):
# * gpt-oss with its balance loss: expert biases looked up by the sorted
#   expert ids (bias[expert_ids_g], a lookup the permutation rule keeps in
#   the sorted order), the gate/up columns taken as gate_up[..., ::2] and
#   [..., 1::2] (views of each sorted row), attention sinks;
# * DeepSeek-V3: sigmoid scores with a correction bias, group-limited
#   routing (an unsorted topk of the groups, their mask written by
#   scatter_(1, idx, 1)), a shared expert, latent attention whose keys are
#   written into slices of a new tensor (gathers at constant indices that
#   --ga-fold-iota-operands reads as loop indices);
# * Qwen2-MoE (a shared expert behind a sigmoid gate) with its balance loss.

import sys

import model_zoo
import moe_models

model_zoo.quiet()
model_zoo.MODELS["gpt-oss-aux"] = moe_models.zoo_case(
    "gpt-oss", router_logits=True)
model_zoo.MODELS["deepseek-v3"] = moe_models.zoo_case("deepseek-v3")
model_zoo.MODELS["qwen2-moe-aux"] = moe_models.zoo_case(
    "qwen2-moe", router_logits=True)
# CHECK: gpt-oss-aux sgd N=4: {{.*}} OK
# CHECK: deepseek-v3 sgd N=4: {{.*}} OK
# CHECK: qwen2-moe-aux sgd N=4: {{.*}} OK
sys.exit(model_zoo.run([("gpt-oss-aux", "sgd", 4), ("deepseek-v3", "sgd", 4),
                        ("qwen2-moe-aux", "sgd", 4)], batch=8))
