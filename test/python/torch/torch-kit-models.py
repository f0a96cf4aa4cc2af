# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The GPU kit's scale models (scripts/gpu_kit/kit_models.py: GPT-2 with
# F.scaled_dot_product_attention(is_causal=True), a Llama with RMSNorm,
# RoPE, SwiGLU and grouped-query attention, both with tied embeddings)
# at a tiny size, one layer, the same code: their steps under
# torch.autocast("cpu", dtype=torch.bfloat16), AdamW, at N = 4 of 6
# sequences (a remainder) and N = 1, against PyTorch's own step by the
# zoo's rule (model_zoo.verdict: no further from the float64 step than
# PyTorch's own, 2x in RMS, 10x at the worst element).

import os
import sys

import torch
import torch.nn.functional as F

import model_zoo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts", "gpu_kit"))
import kit_models  # noqa: E402

model_zoo.quiet()


def kit_lm_loss(model, ids, targets):
    """kit_models.gpt_loss without its autocast (model_zoo adds it)."""
    logits = model(ids)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


def kit_case(name, config):
    def make_model():
        return kit_models.make(name, config=config)[0]

    def make_batch(gen, b):
        ids = torch.randint(0, config["vocab"], (b, config["context"]),
                            generator=gen)
        return ids, torch.randint(0, config["vocab"], ids.shape,
                                  generator=gen)
    return model_zoo.Case(make_model, make_batch, kit_lm_loss)


model_zoo.MODELS["kit-gpt2"] = kit_case(
    "gpt2-124m", dict(vocab=40, d=16, layers=1, heads=2, context=8))
model_zoo.MODELS["kit-llama"] = kit_case(
    "llama-1b", dict(vocab=40, d=16, layers=1, heads=4, kv_heads=2, ffn=24,
                     context=8))

# CHECK: kit-gpt2 adamw N=4 autocast: {{.*}} OK
# CHECK: kit-llama adamw N=1 autocast: {{.*}} OK
sys.exit(model_zoo.run([("kit-gpt2", "adamw", 4), ("kit-llama", "adamw", 1)],
                       autocast=torch.bfloat16))
