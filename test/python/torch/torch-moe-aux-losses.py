# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Auxiliary losses of mixture-of-experts routers under micro-batching,
# against PyTorch's own full-batch step (zoo.check), with no option and no
# change to the loss:
# - transformers' load_balancing_loss_func (Mixtral's, which Qwen3-MoE and
#   OLMoE copy), E * sum_i f_i * P_i, a product of two batch means. Its
#   token fractions f_i count top-k indices: no gradient flows through them,
#   so --ga-accumulate computes them over the whole batch in a forward-only
#   statistics loop before the main loop (GradientFree.cpp), and the mean
#   router probabilities P_i accumulate in the main loop. With and without
#   the attention mask (padding), and in a batch in which an expert receives
#   no token (its router bias pushed down before the second step).
# - the router z-loss (token mean of logsumexp^2 of the router logits) and a
#   sequence-wise balance loss (f and P of each sample, averaged over the
#   samples): sums over the batch, exact as they are.
# - the token-mean cross-entropy over its own count of labels (-100 and
#   padding ignored) beside the aux coefficient.
# N = 1, 4, 8 on a batch of 10 (remainders), two model seeds; the masked
# loss, the sequence-wise loss and a refusal in
# torch-moe-aux-losses-masked.py (which imports this file's models).

import torch
import torch.nn.functional as F
from transformers.models.mixtral.modeling_mixtral import \
    load_balancing_loss_func

import moe_models
import zoo

E, K, D, VOCAB, T, B = 4, 2, 8, 13, 6, 10
AUX, Z, SEQ = 0.05, 1e-2, 0.03


def MoE(seed=0):
    """Two dense-mix MoE layers (moe_models.DenseMoE: every expert on every
    token, weighted by the normalized top-k probabilities)."""
    return moe_models.DenseMoE(VOCAB, D, E, K, layers=2, seed=seed)


def batch(gen, b=B):
    ids = torch.randint(0, VOCAB, (b, T), generator=gen)
    labels = torch.randint(0, VOCAB, (b, T), generator=gen)
    labels = labels.masked_fill(torch.rand(b, T, generator=gen) < 0.2, -100)
    # Padding at the end of every other sample (at least 2 real tokens).
    lengths = torch.randint(2, T + 1, (b,), generator=gen)
    mask = (torch.arange(T) < lengths.unsqueeze(1)).long()
    return ids, labels, mask


def z_loss(gates):
    return sum(torch.logsumexp(g, -1).square().mean() for g in gates)


def sequence_balance(gates, b):
    """Per sample: E * sum_i f_i P_i over that sample's tokens; the mean
    over the samples (DeepSeek-V3's sequence-wise auxiliary loss)."""
    total = 0
    for g in gates:
        probs = F.softmax(g, -1).view(b, T, E)
        chosen = torch.topk(probs, K, dim=-1).indices
        counts = F.one_hot(chosen, E).sum(2).float()  # [b, T, E]
        f = counts.mean(1) / K
        total = total + E * (f * probs.mean(1)).sum(-1).mean()
    return total


def loss_plain(model, ids, labels, mask):
    logits, gates = model(ids)
    ce = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
    return ce + AUX * load_balancing_loss_func(gates, E, K) + \
        Z * z_loss(gates)


def loss_masked(model, ids, labels, mask):
    logits, gates = model(ids)
    labels = labels.masked_fill(mask == 0, -100)
    ce = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
    aux = load_balancing_loss_func(gates, E, K, attention_mask=mask)
    return ce + AUX * aux + SEQ * sequence_balance(gates, ids.shape[0])


def starve_last_expert(it, model, optimizer):
    """From the second step on, no token chooses the last expert."""
    if it == 1:
        with torch.no_grad():
            for layer in model.layers:
                layer.gate.bias[-1] = -30.0


if __name__ == "__main__":
    failures = 0
    # CHECK: lb seed0 sgd N=1: {{.*}} OK
    # CHECK: lb seed0 sgd N=8: {{.*}} OK
    failures += zoo.check("lb seed0", lambda: MoE(0), batch, loss_plain,
                          optimizers=("sgd",), ns=(1, 8))
    # CHECK: lb seed1 starved adamw N=4: {{.*}} OK
    failures += zoo.check("lb seed1 starved", lambda: MoE(1), batch,
                          loss_plain, optimizers=("adamw",), ns=(4,),
                          before_step=starve_last_expert)
    # The second and third steps' batches: no token of either layer chooses
    # the last expert (its count f and its gradient are zero).
    # CHECK: starved: tokens routed to the last expert: 0
    model = MoE(1)
    starve_last_expert(1, model, None)
    gen = torch.Generator().manual_seed(2)
    batch(gen)
    _, gates = model(batch(gen)[0])
    chosen = [torch.topk(g, K, dim=-1).indices for g in gates]
    print("starved: tokens routed to the last expert:",
          sum(int((c == E - 1).sum()) for c in chosen))
    # CHECK: failures: 0
    print(f"failures: {failures}")
