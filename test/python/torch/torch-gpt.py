# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A GPT-style model: token and position Embedding, a pre-LayerNorm block with
# causal F.scaled_dot_product_attention (4 heads) and a GELU MLP, a final
# LayerNorm and an output layer tied to the token embedding; cross-entropy
# with ignore_index (a quarter of the targets are -100) and label smoothing
# 0.1, averaged over the tokens that are not ignored (B = 6, T = 8).

import sys

import zoo

failures = zoo.check("gpt", zoo.GPT, zoo.lm_batch, zoo.lm_loss)
# CHECK: gpt sgd N=1: {{.*}} OK
# CHECK: gpt sgd N=3: {{.*}} OK
# CHECK: gpt sgd N=4: {{.*}} OK
# CHECK: gpt adamw N=1: {{.*}} OK
# CHECK: gpt adamw N=3: {{.*}} OK
# CHECK: gpt adamw N=4: {{.*}} OK
sys.exit(failures)
