#!/usr/bin/env python3
"""Cost of the statistics loop of the batch-level load-balancing loss.

transformers' load_balancing_loss_func (Mixtral, Qwen3-MoE, OLMoE) is
E * sum_i f_i P_i over the whole batch; --ga-accumulate computes the token
fractions f_i (no gradient flows through them) in a forward-only loop over
the micro-batches before the main loop. This measures that loop's share of
the step: one plain-torch MoE language model (top-2 of E experts, dense
mix, L layers), one SGD step of B sequences in N micro-batches, with

  batch:    cross-entropy + coef * load_balancing_loss_func (two loops)
  sequence: cross-entropy + coef * the same loss per sequence, averaged
            (the same operations, no statistics loop: the baseline)

timed in interleaved rounds in one process; the extra time of the first is
the statistics loop: (batch - sequence) / batch. Goal: at most 35 %.

usage: PYTHONPATH=build/python_packages .venv/bin/python \
           bench/moe_aux_prepass.py [--ns 4,8] [--rounds 5] [--layers 2]
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers.models.mixtral.modeling_mixtral import \
    load_balancing_loss_func

from ga_mlir.torch import compile_train_step

E, K, D, VOCAB, T, B = 8, 2, 64, 256, 32, 32


class MoELayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, E, bias=False)
        self.w1 = nn.Parameter(torch.randn(E, D, 2 * D) * D ** -0.5)
        self.w2 = nn.Parameter(torch.randn(E, 2 * D, D) * (2 * D) ** -0.5)

    def forward(self, x):
        h = x.reshape(-1, D)
        logits = self.gate(h)
        probs = F.softmax(logits, dim=-1)
        # The chosen probabilities picked by a one-hot product (topk's own
        # backward writes by index, which ga-mlir does not compile yet).
        hot = F.one_hot(torch.topk(probs, K, dim=-1).indices, E).float()
        weights = (hot * probs.unsqueeze(1)).sum(-1)
        weights = weights / weights.sum(-1, keepdim=True)
        mix = (hot * weights.unsqueeze(-1)).sum(1)
        y = F.silu(torch.einsum("td,edf->tef", h, self.w1))
        y = torch.einsum("tef,efd->ted", y, self.w2)
        return (mix.unsqueeze(-1) * y).sum(1).reshape(x.shape), logits


class MoE(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList([MoELayer() for _ in range(layers)])
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        x = self.embed(ids)
        gates = []
        for layer in self.layers:
            y, logits = layer(F.layer_norm(x, (D,)))
            x = x + y
            gates.append(logits)
        return self.head(x), tuple(gates)


def batch_loss(model, ids, labels):
    logits, gates = model(ids)
    ce = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
    return ce + 0.02 * load_balancing_loss_func(gates, E, K)


def sequence_loss(model, ids, labels):
    logits, gates = model(ids)
    ce = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
    b = ids.shape[0]
    total = 0
    for g in gates:
        probs = F.softmax(g, -1).view(b, T, E)
        chosen = torch.topk(probs, K, dim=-1).indices
        f = F.one_hot(chosen, E).sum(2).float().mean(1)
        total = total + E * (f * probs.mean(1)).sum(-1).mean()
    return ce + 0.02 * total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ns", default="4,8")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (B, T))
    labels = torch.randint(0, VOCAB, (B, T))
    for n in [int(v) for v in args.ns.split(",")]:
        steps = {}
        for name, loss in (("batch", batch_loss),
                           ("sequence", sequence_loss)):
            torch.manual_seed(1)
            model = MoE(args.layers)
            opt = torch.optim.SGD(model.parameters(), lr=1e-3)
            steps[name] = compile_train_step(model, loss, opt,
                                             example_inputs=(ids, labels),
                                             micro_batches=n)
            steps[name](ids, labels)  # warm up
        times = {name: [] for name in steps}
        for _ in range(args.rounds):
            for name, step in steps.items():
                start = time.perf_counter()
                step(ids, labels)
                times[name].append(time.perf_counter() - start)
        med = {name: statistics.median(t) for name, t in times.items()}
        share = (med["batch"] - med["sequence"]) / med["batch"]
        print(f"N={n} B={B} T={T} D={D} E={E} layers={args.layers}: "
              f"batch-level {med['batch'] * 1e3:.1f} ms, sequence-wise "
              f"{med['sequence'] * 1e3:.1f} ms, statistics loop "
              f"{100 * share:.0f} % of the step", flush=True)


if __name__ == "__main__":
    main()
