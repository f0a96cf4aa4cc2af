#!/usr/bin/env python3
# ===- build_kit.py - the GPU acceptance kit, built here --------------------===#
#
#   python build_kit.py DIR [--steps a,b] [--models mlp,gpt] [--ns 1,4,16]
#       [--build-dir BUILD] [--quick]
#
# Writes DIR (see docs/GPU.md, "The acceptance kit"):
#   DIR/run.sh, DIR/run_kit.py, DIR/kit_models.py   the run on the GPU machine
#   DIR/python/ga_mlir/...                          load_step (torch + ctypes)
#   DIR/corpus/<step>/lib<variant>.so               ga-compile --target=cuda
#       (graphs on/off x cuBLASLt on/off), inputs.npz, reference.npz (the
#       full-batch step compiled for the CPU here, run on the same inputs),
#       step.json (argument and result types)
#   DIR/zoo/<model>/n<N>/                           step.save of
#       compile_train_step(target="cuda", micro_batches=N)
#   DIR/zoo/<model>/init.pt, batch.pt, reference.pt the initial state, the
#       batch, the state after one step of PyTorch's own full-batch step, and
#       the loss of our CPU-compiled step and its distance to that state
#       (not for the scale models, gpt2-124m and llama-1b: drawn from seeds
#       on the GPU machine, checked against PyTorch's step there)
#   DIR/dp/<model>/                              step.save of the
#       data-parallel compile_train_step(target="cuda", micro_batches=4) in
#       a torch.distributed group (dp_step.py, run under torchrun there)
#   DIR/budget/<model>/<step>/                   (--budget) issue #42's
#       sweep on the GPU: step.save of target="cuda" steps at every (N,
#       recompute set) and under max_memory= budgets, libraries
#       gzip-compressed (budget_sweep.py; the goals by remat_budget.py)
#   DIR/manifest.json
# Needs the project's virtual environment (torch, torch-mlir, numpy) and a
# build with the CUDA runtime; no GPU.
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA_PARALLEL = os.path.join(ROOT, "test", "Integration", "GPU", "Inputs",
                             "data_parallel.py")

# Corpus steps of the kit: (file in test/Integration/Inputs/steps, N,
# extra --ga-accumulate options).
CORPUS = [("mlp_sgd", 4, ""), ("mlp_adamw", 4, ""), ("mlp_momentum", 4, ""),
          ("linreg_mean", 4, ""), ("layernorm_regression", 4, ""),
          ("transformer_block", 4, ""), ("metrics", 4, ""),
          ("masked_tokens", 4, ""),
          ("batchnorm_mlp", 4, "recompute-statistics=true"),
          # Micro-batch counts that leave a remainder (B = 24 in 5, B = 8 in
          # 3: the last micro-batch launched outside the graph) and bf16
          # parameters: what Device/run-graphs.test covers in the suite
          # where there is a GPU.
          ("mlp_sgd", 5, ""), ("transformer_block", 3, ""),
          ("bf16_mlp", 4, ""),
          # Data-parallel: every SGD update reads `ga.all_reduce <mean>` of
          # its gradient (test/Integration/GPU/Inputs/data_parallel.py), an
          # NCCL all-reduce after the loop; run on one GPU as a world of one
          # rank, where the mean is the gradient itself, so the reference is
          # the step without the all-reduces.
          ("mlp_sgd", 4, "", "dp"), ("transformer_block", 4, "", "dp")]
VARIANTS = {"graphs+cublaslt": "cuda-graphs=1 cublas=1",
            "graphs": "cuda-graphs=1 cublas=0",
            "cublaslt": "cuda-graphs=0 cublas=1",
            "plain": "cuda-graphs=0 cublas=0"}


def find_build(arg):
    for d in (arg, os.environ.get("GA_BUILD_DIR"), os.path.join(ROOT, "build")):
        if d and os.path.exists(os.path.join(d, "bin", "ga-compile")):
            return os.path.abspath(d)
    sys.exit("build_kit: no build with ga-compile (pass --build-dir)")


def typed(arg_type):
    """A step's argument or result type for step.json: its shape (null for a
    scalar) and element type, as steplib read them from the parsed IR."""
    return {"shape": list(arg_type.shape) if arg_type.is_tensor else None,
            "element": arg_type.element, "text": arg_type.text}


def build_corpus(kit, build, steps, log):
    sys.path.insert(0, os.path.join(build, "python_packages"))
    from ga_mlir import aot, steplib
    ga_opt = os.path.join(build, "bin", "ga-opt")
    entries = []
    for name, n, options, *kind in CORPUS:
        path = os.path.join(ROOT, "test", "Integration", "Inputs", "steps",
                            name + ".mlir")
        entry = name if n == 4 else f"{name}_n{n}"
        data_parallel = kind == ["dp"]
        if data_parallel:
            entry += "_dp"
        if steps and entry not in steps:
            continue
        out = os.path.join(kit, "corpus", entry)
        os.makedirs(out, exist_ok=True)
        arg_types, result_types = steplib.function_type(path)
        # The inputs ga-verify draws for seed 0: per each argument's ga.init
        # and ga.range (Adam's second moments positive, class indices in
        # range), so that the reference is a number and the kit checks what
        # the test suite checks.
        args = steplib.draw_inputs(path)
        # The reference: the step as written, on the whole batch, compiled
        # for the CPU here (the rewrite is checked against it by ga-verify in
        # the test suite).
        ref_lib = steplib.build_library(ga_opt, path, os.path.join(
            kit, ".work", name), "ref")
        call_args = [a if t.is_tensor else a.item()
                     for a, t in zip(args, arg_types)]
        ref = steplib.CompiledStep(ref_lib, arg_types, result_types)(
            *call_args)
        np.savez(os.path.join(out, "inputs.npz"), *args)
        np.savez(os.path.join(out, "reference.npz"),
                 *[np.asarray(r) for r in ref])
        # ga-verify's tolerance of every element, derived from the step on
        # these inputs (its rounding-error bound and the spread of runs with
        # perturbed roundings): the GPU's other order of sums is held to
        # the rule the test suite holds the CPU lowerings to.
        tolerances = steplib.derived_tolerances(
            ga_opt, path, os.path.join(kit, ".work", name, "tolerance"),
            call_args, ref)
        np.savez(os.path.join(out, "tolerance.npz"), *tolerances)
        source = open(path).read()
        if data_parallel:
            source = subprocess.run(
                [sys.executable, DATA_PARALLEL, path], check=True,
                capture_output=True, text=True).stdout
        accumulate = f"micro-batches={n} {options}".strip()
        lowered = {}
        for variant, lower in VARIANTS.items():
            lib = os.path.join(out, f"lib{variant.replace('+', '_')}.so")
            aot.compile_step(source, lib, "cuda", accumulate=accumulate,
                             lower_options=lower, build_dir=build, name=path)
            lowered[variant] = os.path.basename(lib)
        with open(os.path.join(out, "step.json"), "w") as f:
            # Types as read from the parsed IR (shape: null for a scalar).
            json.dump({"args": [typed(t) for t in arg_types],
                       "results": [typed(t) for t in result_types],
                       "micro_batches": n, "accumulate": accumulate,
                       "data_parallel": data_parallel,
                       "libraries": lowered}, f, indent=1)
        log(f"corpus {entry}: N={n} {options} ({len(lowered)} libraries)")
        entries.append(entry)
    return entries


def build_zoo(kit, build, models, ns, log, extra=None, micro_batch=None):
    sys.path.insert(0, os.path.join(build, "python_packages"))
    sys.path.insert(0, HERE)
    import torch
    import kit_models
    from ga_mlir.torch import compile_train_step
    entries = []
    for name in models:
        out = os.path.join(kit, "zoo", name)
        os.makedirs(out, exist_ok=True)
        if name in kit_models.SCALE:
            build_scale_model(out, name, ns, log, extra, micro_batch)
            entries.append(name)
            continue
        model, loss_fn, batch = kit_models.make(name)
        init = {k: v.clone() for k, v in model.state_dict().items()}
        torch.save(init, os.path.join(out, "init.pt"))
        torch.save(batch, os.path.join(out, "batch.pt"))
        options = {"accumulator_type": "f32"} if name in ("gpt", "gpt-moe") \
            else {}
        options.update(extra or {})
        for n in ns:
            model.load_state_dict(init)
            opt = kit_models.optimizer_for(model)
            step = compile_train_step(model, loss_fn, opt, batch,
                                      micro_batches=n, target="cuda",
                                      **options)
            step.save(os.path.join(out, f"n{n}"))
            save_memory_report(step, os.path.join(out, f"n{n}"), log)
            log(f"zoo {name}: N={n} compiled for the GPU and saved")
        # References: PyTorch's own full-batch step on the CPU (CPU bf16
        # autocast for gpt), and our step compiled for the CPU (N = 4).
        refs = {}
        model.load_state_dict(init)
        opt = kit_models.optimizer_for(model)
        refs["pytorch_loss"] = kit_models.torch_accumulation_step(
            model, loss_fn, opt, batch, 1).item()
        refs["pytorch"] = {k: v.clone() for k, v in
                           model.state_dict().items()}
        model.load_state_dict(init)
        opt = kit_models.optimizer_for(model)
        from ga_mlir.driver import NVVM_OPTIONS
        cpu = compile_train_step(model, loss_fn, opt, batch, micro_batches=4,
                                 **{k: v for k, v in options.items()
                                    if k not in NVVM_OPTIONS})
        refs["ours_cpu_loss"] = cpu(*batch).item()
        # Only how far our CPU step is from PyTorch's (its whole state would
        # double the kit's largest file).
        refs["ours_cpu_max_diff"] = max(
            (v - refs["pytorch"][k]).abs().max().item()
            for k, v in model.state_dict().items())
        torch.save(refs, os.path.join(out, "reference.pt"))
        log(f"zoo {name}: references (PyTorch loss {refs['pytorch_loss']:.6f},"
            f" ours on the CPU {refs['ours_cpu_loss']:.6f}, parameters within "
            f"{refs['ours_cpu_max_diff']:.2g})")
        entries.append(name)
    return entries


def save_memory_report(step, out, log):
    """The static memory report of the GPU step (step.memory_report() of a
    target="cuda" step: device bytes of its buffers and the cuBLASLt
    workspace) as out/memory_report.json, which run_kit prints beside the
    device memory measured around the step. A report the compiler refuses
    is logged, not fatal: the kit still runs."""
    try:
        report = step.memory_report()
    except Exception as e:  # noqa: BLE001
        log(f"  no memory report: {type(e).__name__}: {e}"[:400])
        return
    with open(os.path.join(out, "memory_report.json"), "w") as f:
        json.dump(report, f)


def build_scale_model(out, name, ns, log, extra=None, micro_batch=None):
    """A scale model (kit_models.SCALE): its step compiled for the GPU at
    every N (micro-batches of kit_models.MICRO_BATCH[name] sequences) and
    saved; no weights, batch or reference travel: run_kit draws them on the
    GPU from the kit's seed and runs PyTorch's own step there. (The trace
    runs the forward eagerly on the CPU at the whole batch, B = 8 N
    sequences: minutes per N here. The meta device does not do: the
    frontend runs the optimizer's step on the parameters to learn its
    state.)"""
    import kit_models
    from ga_mlir.torch import compile_train_step
    for n in ns:
        model, loss_fn, batch = kit_models.make(name, n=n,
                                                micro_batch=micro_batch)
        opt = kit_models.optimizer_for(model)
        step = compile_train_step(model, loss_fn, opt, batch,
                                  micro_batches=n, target="cuda",
                                  accumulator_type="f32", **(extra or {}))
        step.save(os.path.join(out, f"n{n}"))
        save_memory_report(step, os.path.join(out, f"n{n}"), log)
        log(f"zoo {name}: N={n} ({batch[0].shape[0]} x "
            f"{batch[0].shape[1]} tokens) compiled for the GPU and saved")


def copy_runtime_package(kit, build):
    """The ga_mlir package without the compiler parts' dependencies: the
    kit imports ga_mlir.torch.load_step only."""
    src = os.path.join(build, "python_packages", "ga_mlir")
    dst = os.path.join(kit, "python", "ga_mlir")
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
        "__pycache__", "_config.py"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--build-dir")
    p.add_argument("--steps", default="",
                   help="corpus entries, e.g. mlp_sgd,mlp_sgd_n5,mlp_sgd_dp "
                   "(default all)")
    p.add_argument("--models", default="mlp,gpt",
                   help="of kit_models.MODELS (gpt2-124m, llama-1b: the "
                   "scale models)")
    p.add_argument("--ns", default="1,4,16")
    p.add_argument("--micro-batch", type=int,
                   help="sequences per micro-batch of the scale models "
                   "(default kit_models.MICRO_BATCH; the trace holds the "
                   "whole batch's activations on this machine's CPU)")
    p.add_argument("--variant", action="append", default=[],
                   metavar="NAME=LOWER_OPTIONS",
                   help="corpus libraries to build instead of the four "
                   "default ones, e.g. 'rows=row-min-rows=1 row-warp-min=4' "
                   "(options of --ga-lower-to-nvvm)")
    p.add_argument("--budget", default="",
                   help="budget sweeps (issue #42) of these models "
                   "(budget_sweep.MODELS: gpt2, llama): every N of "
                   "--budget-ns x every set of --budget-sets, and "
                   "max_memory= at --budget-percentages of the N = 1 peak")
    p.add_argument("--budget-size", default="full",
                   help="full (the benchmark's: 4 layers, d 256, T 256, "
                   "B 16) or tiny")
    p.add_argument("--budget-ns", default="1,2,4,8,16")
    p.add_argument("--budget-sets", default="none,pointwise,attention,layers")
    p.add_argument("--budget-percentages", default="100,75,50,35,25")
    p.add_argument("--option", action="append", default=[],
                   metavar="KEY=VALUE",
                   help="a compile_train_step option of the zoo and scale "
                   "models' steps (e.g. row_warp_min=32, indexing=gather); "
                   "integers as integers")
    a = p.parse_args()
    build = find_build(a.build_dir)
    kit = os.path.abspath(a.dir)
    if os.path.exists(kit) and os.listdir(kit):
        sys.exit(f"build_kit: {kit} exists and is not empty")
    os.makedirs(kit, exist_ok=True)
    os.environ.setdefault("GA_MLIR_CACHE_DIR", os.path.join(kit, ".work",
                                                            "cache"))
    lines = []

    def log(line):
        print(line, flush=True)
        lines.append(line)

    steps = [s for s in a.steps.split(",") if s]
    models = [m for m in a.models.split(",") if m]
    ns = [int(n) for n in a.ns.split(",") if n]
    if a.variant:
        VARIANTS.clear()
        for v in a.variant:
            name, _, lower = v.partition("=")
            VARIANTS[name] = lower
    corpus = build_corpus(kit, build, steps, log)
    extra = {}
    for option in a.option:
        key, _, value = option.partition("=")
        extra[key] = int(value) if value.isdigit() else value
    zoo = build_zoo(kit, build, models, ns, log, extra, a.micro_batch) \
        if models else []
    # The torch data-parallel step (dp_step.py, issue #24's hook).
    import dp_step
    import kit_models
    small = [m for m in zoo if m not in kit_models.SCALE]
    dp = dp_step.build(kit, small, log) if small else []
    sys.path.insert(0, os.path.join(build, "python_packages"))
    import budget_sweep
    budget = budget_sweep.build(
        kit, [m for m in a.budget.split(",") if m], a.budget_size,
        [int(n) for n in a.budget_ns.split(",")],
        [s for s in a.budget_sets.split(",") if s],
        [int(p) for p in a.budget_percentages.split(",")], log, extra)
    copy_runtime_package(kit, build)
    for f in ("run_kit.py", "kit_models.py", "dp_step.py",
              "scale_models.py", "budget_sweep.py", "measure.py"):
        shutil.copy2(os.path.join(HERE, f), os.path.join(kit, f))
    # The budget sweep's goals are the CPU benchmark's own checks.
    shutil.copy2(os.path.join(ROOT, "bench", "remat_budget.py"),
                 os.path.join(kit, "remat_budget.py"))
    shutil.copy2(os.path.join(HERE, "run.sh"), os.path.join(kit, "run.sh"))
    shutil.rmtree(os.path.join(kit, ".work"), ignore_errors=True)
    with open(os.path.join(kit, "manifest.json"), "w") as f:
        json.dump({"corpus": corpus, "zoo": zoo, "dp": dp, "ns": ns,
                   "budget": budget,
                   "options": extra,
                   "variants": list(VARIANTS), "log": lines}, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(kit) for f in fs)
    log(f"kit: {kit}, {size / 2**20:.1f} MiB")
    if size > 48 * 2**20:
        sys.exit(f"build_kit: the kit is {size / 2**20:.1f} MiB, over the "
                 "48 MiB a GPU machine takes")


if __name__ == "__main__":
    main()
