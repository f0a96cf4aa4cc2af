#!/usr/bin/env python3
"""A CNN's static storage and memory report under compile_train_step, and
(with --run) its gradients against float64 PyTorch.

The model: "wide-resnet", torchvision's ResNet with Bottleneck [1, 1, 1, 1],
width_per_group 16, 10 classes (layer4's 1 x 1 stride-2 downsample is
1024 -> 2048 channels on 2 x 2 pixels), or any torchvision classifier by
name ("resnet18", "resnet50": 10 classes); 32 x 32 images (torch.randn),
BatchNorm in training mode (recompute_statistics=True), cross-entropy, SGD
without momentum, 1 thread.

Prints the compile time, step.memory_report()'s static, temporaries and
total_peak, and the library's static storage (its .bss and .lbss, read from
the ELF file). With --run: one call, then the gradients recovered from the
step ((p - p') / lr, lr = 1e4) against float64 PyTorch's, the largest
difference relative to each parameter's largest gradient (PyTorch's float32
gradients' in the same measure beside it).

usage: .venv/bin/python bench/conv_memory.py [--model wide-resnet]
           [--batch 8] [--micro-batches 1] [--run]
"""
import argparse
import copy
import time

import torch
import torch.nn.functional as F
import torchvision
from torchvision.models.resnet import Bottleneck, ResNet

from ga_mlir import steplib
from ga_mlir.torch import compile_train_step

RATE = 1e4


def make_model(name):
    if name == "wide-resnet":
        return ResNet(Bottleneck, [1, 1, 1, 1], width_per_group=16,
                      num_classes=10)
    return getattr(torchvision.models, name)(num_classes=10)


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="wide-resnet")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--micro-batches", type=int, default=1)
    p.add_argument("--run", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = make_model(args.model).train()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(args.batch, 3, 32, 32, generator=gen)
    y = torch.randint(0, 10, (args.batch,), generator=gen)
    reference = copy.deepcopy(model)
    start = time.perf_counter()
    step = compile_train_step(
        model, loss_fn, torch.optim.SGD(model.parameters(), lr=RATE), (x, y),
        micro_batches=args.micro_batches, recompute_statistics=True)
    report = step.memory_report()
    print(f"{args.model} B={args.batch} N={args.micro_batches}: compile "
          f"{time.perf_counter() - start:.0f} s; report: static "
          f"{report['static']} temporaries {report['temporaries']} "
          f"total_peak {report['total_peak']}; library static storage "
          f"{steplib.step_static_bytes(step)}", flush=True)
    if not args.run:
        return
    before = [t.detach().clone() for t in model.parameters()]
    start = time.perf_counter()
    step(x, y)
    print(f"call {time.perf_counter() - start:.2f} s")
    ours = [(b - t.detach()) / RATE
            for b, t in zip(before, model.parameters())]
    exact = copy.deepcopy(reference).double()
    loss_fn(exact, x.double(), y).backward()
    loss_fn(reference, x, y).backward()
    worst, theirs, where = 0.0, 0.0, None
    for (name, e), o, r in zip(exact.named_parameters(), ours,
                               reference.parameters()):
        scale = e.grad.abs().max().item()
        err = (o.double() - e.grad).abs().max().item() / scale
        theirs = max(theirs, (r.grad.double() - e.grad).abs().max().item() /
                     scale)
        if err >= worst:
            worst, where = err, name
    print(f"gradients vs float64: largest {worst:.2g} ({where}); PyTorch "
          f"float32's largest {theirs:.2g}")


if __name__ == "__main__":
    main()
