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
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from transformers.models.mixtral.modeling_mixtral import \
    load_balancing_loss_func

from ga_mlir.torch import compile_train_step

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "python", "torch"))
import moe_models  # noqa: E402

E, K, D, VOCAB, T, B = 8, 2, 64, 256, 32, 32


def MoE(layers):
    """The plain-torch MoE of the tests (test/python/torch/moe_models.py),
    a layer norm before each layer."""
    return moe_models.DenseMoE(VOCAB, D, E, K, layers=layers, norm=True,
                               gate_bias=False,
                               scales=(D ** -0.5, (2 * D) ** -0.5))


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
