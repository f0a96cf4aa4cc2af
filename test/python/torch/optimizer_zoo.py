"""The optimizers of the torch-optimizers-*.py tests: every torch.optim
optimizer with a closed-form step, in settings that reach its branches
within 8 steps, and Lion, an optimizer written by the user (a
torch.optim.Optimizer subclass the compiled step has never seen). Not a
test by itself (lit.local.cfg excludes it)."""

import torch
import torch.nn as nn

import zoo


class Lion(torch.optim.Optimizer):
    """Lion (Chen et al., 2023): the sign of an interpolation of the
    momentum and the gradient, decoupled weight decay."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas,
                                      weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                update = exp_avg * beta1 + p.grad * (1 - beta1)
                p.add_(torch.sign(update) * -group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)


def _matrices(m):
    return [p for p in m.parameters() if p.dim() == 2]


O = torch.optim
OPTIMIZERS = {
    "sgd-nesterov": lambda m: O.SGD(m.parameters(), lr=0.05, momentum=0.9,
                                    nesterov=True, weight_decay=1e-2,
                                    maximize=True),
    "sgd-dampening": lambda m: O.SGD(m.parameters(), lr=0.05, momentum=0.5,
                                     dampening=0.3, weight_decay=1e-3),
    "sgd-plain": lambda m: O.SGD(m.parameters(), lr=0.1),
    "adam-amsgrad": lambda m: O.Adam(m.parameters(), lr=1e-2,
                                     betas=(0.9, 0.5), weight_decay=1e-2,
                                     amsgrad=True, maximize=True),
    "adamw-amsgrad": lambda m: O.AdamW(m.parameters(), lr=1e-2,
                                       betas=(0.8, 0.5), weight_decay=0.05,
                                       amsgrad=True),
    "adagrad": lambda m: O.Adagrad(m.parameters(), lr=0.05, lr_decay=0.01,
                                   initial_accumulator_value=0.1,
                                   weight_decay=1e-3),
    "adadelta": lambda m: O.Adadelta(m.parameters(), lr=1.0, rho=0.8,
                                     weight_decay=1e-3),
    "adamax": lambda m: O.Adamax(m.parameters(), lr=1e-2,
                                 weight_decay=1e-3),
    "asgd": lambda m: O.ASGD(m.parameters(), lr=1e-2, t0=3, lambd=1e-3,
                             weight_decay=1e-3),
    "nadam": lambda m: O.NAdam(m.parameters(), lr=1e-2, momentum_decay=4e-2,
                               weight_decay=1e-2,
                               decoupled_weight_decay=True),
    # beta2 = 0.8: the variance is rectified from step 7 on (rho_t > 5), not
    # before: both branches within 8 steps.
    "radam": lambda m: O.RAdam(m.parameters(), lr=1e-2, betas=(0.9, 0.8),
                               weight_decay=1e-2,
                               decoupled_weight_decay=True),
    "rmsprop": lambda m: O.RMSprop(m.parameters(), lr=1e-2, alpha=0.9,
                                   centered=True, momentum=0.5,
                                   weight_decay=1e-3),
    "rprop": lambda m: O.Rprop(m.parameters(), lr=1e-2, etas=(0.4, 1.3),
                               step_sizes=(1e-4, 0.5)),
    # Muon takes 2-D parameters only (the biases stay as they are).
    "muon": lambda m: O.Muon(_matrices(m), lr=2e-2, momentum=0.9,
                             weight_decay=1e-2),
    # Adafactor reads its step count and norms with .item() and takes
    # min/max of them in Python: traced as 0-d tensors. Tiny's weights take
    # its factored path, its biases the unfactored one.
    "adafactor": lambda m: O.Adafactor(m.parameters()),
    "adafactor-decay": lambda m: O.Adafactor(m.parameters(), lr=2e-2,
                                             beta2_decay=-0.6,
                                             weight_decay=1e-2,
                                             maximize=True),
    "lion": lambda m: Lion(m.parameters(), lr=1e-3, betas=(0.9, 0.99),
                           weight_decay=1e-2),
}


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def batch(gen, b=8):
    return (torch.randn(b, 6, generator=gen),
            torch.randint(0, 3, (b,), generator=gen))


def check(names, ns=(1, 4, 3), steps=8, **tolerances):
    """zoo.check of the optimizers `names` on Tiny: PyTorch's full-batch
    step against the compiled one at N = 1, 4 and 3 (B = 8: a remainder),
    8 steps each."""
    failures = 0
    for name in names:
        make = OPTIMIZERS[name]
        make.__name__ = name
        failures += zoo.check("tiny", Tiny, batch, zoo.classification_loss,
                              optimizers=(make,), ns=ns, steps=steps,
                              **tolerances)
    return failures
