# RUN: rm -rf %t.cache %t.saved
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %t.saved | FileCheck %s
#
# A step with more C arguments than a ctypes call can pass (1024): 162
# parameters with AdamW's three states each (exp_avg, exp_avg_sq, step),
# its hyper-parameters, the inputs, and as many results: 1300 C
# arguments. The library is called through its
# packed entry point (_ga_packed_train_step, one void ** argument:
# --ga-emit-packed-interfaces), compiled, saved and loaded, and trained
# against PyTorch's own full-batch step from the same initial state (the
# oracle).

import copy
import sys

import torch
import torch.nn as nn

import zoo
from ga_mlir.torch import compile_train_step, load_step


class ManyScales(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 5)
        self.scales = nn.ParameterList(
            nn.Parameter(1 + 0.01 * torch.randn(())) for _ in range(160))

    def forward(self, x):
        y = self.fc(x[:, :4])
        for s in self.scales:
            y = y * s
        return y


def adamw(m):
    return torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01)


def worst_difference(model, oracle, opt, oracle_opt):
    worst = 0.0
    for p, q in zip(model.parameters(), oracle.parameters()):
        worst = max(worst, (p - q).abs().max().item())
        for k in ("exp_avg", "exp_avg_sq"):
            worst = max(worst, (opt.state[p][k] - oracle_opt.state[q][k])
                        .abs().max().item())
    return worst


def train(step, model, oracle, opt, oracle_opt, batches):
    for batch in batches:
        loss = step(*batch)
        ref = zoo.classification_loss(oracle, *batch)
        ref.backward()
        oracle_opt.step()
        oracle_opt.zero_grad()
        assert abs(loss.item() - ref.item()) < 1e-5, (loss, ref)
    return worst_difference(model, oracle, opt, oracle_opt)


torch.manual_seed(0)
model = ManyScales()
oracle = copy.deepcopy(model)
opt, oracle_opt = adamw(model), adamw(oracle)
gen = torch.Generator().manual_seed(1)
batches = [zoo.mlp_batch(gen) for _ in range(3)]
step = compile_train_step(model, zoo.classification_loss, opt,
                          example_inputs=batches[0], micro_batches=3)
layout = next(iter(step._variants.values())).layout
count = layout.arg_count() + len(layout.results)
print("C arguments over 1024:", count > 1024, "entry:", layout.entry_point)
# CHECK: C arguments over 1024: True entry: _ga_packed_train_step
worst = train(step, model, oracle, opt, oracle_opt, batches)
print("compiled: max difference to PyTorch after 3 steps:",
      "ok" if worst < 1e-5 else worst)
# CHECK: compiled: max difference to PyTorch after 3 steps: ok

# Saved and loaded: the same entry point, through load_step.
step.save(sys.argv[1])
loaded = load_step(sys.argv[1], model, opt)
worst = train(loaded, model, oracle, opt, oracle_opt, batches)
print("loaded: max difference to PyTorch after 3 more steps:",
      "ok" if worst < 1e-5 else worst)
# CHECK: loaded: max difference to PyTorch after 3 more steps: ok
