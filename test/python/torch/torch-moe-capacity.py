# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A capacity-limited router (moe_models.CapacityMoE: top-1, each token's
# position in its expert's queue a cumsum of the one-hot routing over the
# tokens of the whole batch, tokens past the capacity dropped). Under
# ordinary gradient accumulation the queues would be a micro-batch's and the
# result would depend on N; here the positions are a forward-only count over
# the batch, computed before the loop like any statistic of the whole
# batch, so the step is PyTorch's full-batch step (no refusal is needed):
# against PyTorch, SGD at N = 3 and AdamW at N = 4 (a remainder in each),
# two steps on two batches, with tokens dropped in each.

import torch

import moe_models
import zoo

B, T = 6, 8


def batch(gen):
    return (torch.randint(0, 29, (B, T), generator=gen),
            torch.randint(0, 29, (B, T), generator=gen))


def make_model():
    return moe_models.CapacityMoE(capacity_factor=0.5)


# The example batch drops tokens (capacity 0.5 * 48 / 4 = 6 per expert).
# CHECK: dropped: True
torch.manual_seed(1)
model = make_model()
ids, _ = batch(torch.Generator().manual_seed(2))
with torch.no_grad():
    h = model.embed(ids).reshape(-1, model.d)
    counts = torch.bincount(model.gate(h).argmax(-1), minlength=4)
print("dropped:", bool((counts > 6).any()))

# CHECK: capacity sgd N=3: {{.*}} OK
# CHECK: capacity adamw N=4: {{.*}} OK
failures = sum(zoo.check("capacity", make_model, batch, zoo.lm_loss,
                         optimizers=(opt,), ns=(n,), steps=2)
               for opt, n in (("sgd", 3), ("adamw", 4)))
raise SystemExit(failures)
