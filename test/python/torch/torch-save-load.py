# RUN: rm -rf %t.cache %t.saved %t.sgd %t.saved.format1
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s save %t.saved %t.sgd | FileCheck %s --check-prefix=SAVE
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_CAPI_LIBRARY=/nonexistent/libGACAPI.so %torch_python %s load %t.saved | FileCheck %s --check-prefix=LOAD
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_CAPI_LIBRARY=/nonexistent/libGACAPI.so %torch_python %s mismatch %t.saved %t.sgd | FileCheck %s --check-prefix=MISMATCH
#
# step.save(dir) and ga_mlir.torch.load_step(dir, model, optimizer): a step
# compiled for the CPU, saved, then loaded in another process where
# torch-mlir cannot be imported and the ga-mlir library cannot be loaded
# (GA_CAPI_LIBRARY points nowhere), trained for three steps against
# PyTorch's own full-batch step (the oracle), from the same initial state.
# Then every kind of mismatch with the saved signature is a CompileError
# that names it.

import json
import os
import shutil
import sys

if sys.argv[1] != "save":
    # The loading side: torch + ctypes only.
    sys.modules["torch_mlir"] = None

import torch
import torch.nn.functional as F

import zoo
from ga_mlir.torch import CompileError, compile_train_step, load_step

B = 16


def model_and_batch(hidden=24):
    torch.manual_seed(0)
    model = zoo.MLP(hidden=hidden)
    g = torch.Generator().manual_seed(1)
    batch = (torch.randn(B, 12, generator=g),
             torch.randint(0, 5, (B,), generator=g))
    return model, batch


def loss_fn(m, x, y):
    return F.cross_entropy(m(x), y)


def adamw(model, **kw):
    return torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05,
                             **kw)


def save(directory, sgd_directory):
    model, batch = model_and_batch()
    step = compile_train_step(model, loss_fn, adamw(model), batch,
                              micro_batches=4, mcpu="x86-64")
    step.save(directory)
    names = sorted(os.listdir(directory))
    print("saved:", " ".join(names))
    model, batch = model_and_batch()
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    compile_train_step(model, loss_fn, sgd, batch, micro_batches=2,
                       mcpu="x86-64").save(sgd_directory)
    # SAVE: saved: {{(libga_cpu_runtime.so )?}}libstep.so step.json
    # SAVE-NOT: libMLIR


def load(directory):
    model, batch = model_and_batch()
    oracle, _ = model_and_batch()
    opt, oracle_opt = adamw(model), adamw(oracle)
    step = load_step(directory, model, opt)
    print("micro-batches:", step.chosen_micro_batches())
    worst = 0.0
    for i in range(3):
        loss = step(*batch)
        ref = loss_fn(oracle, *batch)
        ref.backward()
        oracle_opt.step()
        oracle_opt.zero_grad()
        worst = max(worst, abs(loss.item() - ref.item()))
        for (n, p), q in zip(model.named_parameters(), oracle.parameters()):
            worst = max(worst, (p - q).abs().max().item())
        for p, q in zip(model.parameters(), oracle.parameters()):
            for k in ("exp_avg", "exp_avg_sq"):
                worst = max(worst, (opt.state[p][k] - oracle_opt.state[q][k])
                            .abs().max().item())
    print("max difference to PyTorch after 3 steps:",
          "ok" if worst < 1e-5 else worst)
    maps = open("/proc/self/maps").read()
    print("torch_mlir imported:", sys.modules.get("torch_mlir") is not None)
    print("LLVM or MLIR loaded:", "libMLIR" in maps or "libLLVM" in maps or
          "libGACAPI" in maps)
    # LOAD: micro-batches: 4
    # LOAD: max difference to PyTorch after 3 steps: ok
    # LOAD: torch_mlir imported: False
    # LOAD: LLVM or MLIR loaded: False


def expect_error(what, fn):
    try:
        fn()
        print(f"{what}: no error")
    except (CompileError, TypeError) as e:
        print(f"{what}: {type(e).__name__}: {e}")


def mismatch(directory, sgd_directory):
    model, batch = model_and_batch(hidden=20)
    expect_error("shape", lambda: load_step(directory, model, adamw(model)))
    # MISMATCH: shape: CompileError: load_step: parameter 'net.0.weight' is [20, 12] float32; the step was compiled for [24, 12] float32

    model, batch = model_and_batch()
    model.net[0].weight.requires_grad_(False)
    expect_error("frozen", lambda: load_step(directory, model, adamw(model)))
    # MISMATCH: frozen: CompileError: load_step: the step trains the parameters ['net.0.weight', {{.*}}; this model and optimizer train ['net.0.bias',

    model, batch = model_and_batch()
    model.extra = torch.nn.Linear(2, 2)
    expect_error("extra", lambda: load_step(directory, model, adamw(model)))
    # MISMATCH: extra: CompileError: load_step: the model has parameters ['extra.weight', 'extra.bias'] that the step was not compiled with

    model, batch = model_and_batch()
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    expect_error("kind", lambda: load_step(directory, model, sgd))
    # MISMATCH: kind: CompileError: load_step: the step was compiled for AdamW; the optimizer is SGD

    model, batch = model_and_batch()
    expect_error("amsgrad", lambda: load_step(directory, model,
                                              adamw(model, amsgrad=True)))
    # MISMATCH: amsgrad: CompileError: load_step: the optimizer's setting amsgrad of group 0 is True; the step was compiled with False (a setting its step takes as a Python number is baked into the step)

    model, batch = model_and_batch()
    momentum = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    expect_error("momentum", lambda: load_step(sgd_directory, model,
                                               momentum))
    # MISMATCH: momentum: CompileError: load_step: the optimizer's setting momentum of group 0 is 0.9; the step was compiled with 0

    model, batch = model_and_batch()
    step = load_step(directory, model, adamw(model))
    expect_error("input", lambda: step(batch[0][:8], batch[1][:8]))
    # MISMATCH: input: CompileError: step: input 0 is [8, 12] float32; the step was compiled for [16, 12] float32 (a saved step is not traced again)
    expect_error("arity", lambda: step(batch[0]))
    # MISMATCH: arity: TypeError: step: expected 2 inputs, got 1

    expect_error("missing", lambda: load_step(directory + ".nowhere", model,
                                              adamw(model)))
    # MISMATCH: missing: CompileError: load_step: cannot read {{.*}}.nowhere/step.json

    # A directory saved by an earlier version (format 1: no packed entry
    # point) is refused with what to do.
    old = directory + ".format1"
    shutil.copytree(directory, old, dirs_exist_ok=True)
    with open(os.path.join(old, "step.json")) as f:
        signature = json.load(f)
    signature["format"] = 1
    del signature["entry_point"]
    with open(os.path.join(old, "step.json"), "w") as f:
        json.dump(signature, f)
    expect_error("format 1", lambda: load_step(old, model, adamw(model)))
    # MISMATCH: format 1: CompileError: saved step of format 1 (written by an earlier ga_mlir, whose library takes one C argument per tensor); this ga_mlir reads format 3 (libraries called through their packed entry point _ga_packed_train_step): compile and save the step again

    with open(os.path.join(directory, "libstep.so"), "ab") as f:
        f.write(b"\0")
    expect_error("changed", lambda: load_step(directory, model,
                                              adamw(model)))
    # MISMATCH: changed: CompileError: load_step: {{.*}}libstep.so is missing or is not the library the signature was written for


{"save": save, "load": load, "mismatch": mismatch}[sys.argv[1]](*sys.argv[2:])
