#!/usr/bin/env python3
"""compile_train_step against PyTorch 2.15's own gradient accumulation.

For each model and N, one training step of a batch of B samples in N
micro-batches, timed three ways in separate processes, interleaved rounds:

  ours:    ga_mlir.torch.compile_train_step(model, loss_fn, AdamW,
           micro_batches=N): one compiled call per step (CBLAS, 512-bit
           vectors, static temporaries, llc -mcpu=native)
  eager:   for each micro-batch: loss_fn(model, x_i, y_i) * (B_i / B)
           .backward(); then optimizer.step(); optimizer.zero_grad()
  compile: the same loop with the model under torch.compile (Inductor, C++
           CPU code); the optimizer step stays eager

Models: the MLP of docs/CPU.md (784-1024-1024-10, ReLU, cross-entropy,
B = 256) and a GPT-style model (vocabulary 512, d = 128, 4 heads, context
64, one pre-LayerNorm block with causal scaled_dot_product_attention and a
GELU MLP, output tied to the embedding, token-mean cross-entropy, B = 32).
AdamW (lr 1e-3, weight decay 0.01), 1 thread (torch.set_num_threads(1),
OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = 1).

usage: .venv/bin/python bench/torch_accumulation.py [--ns 1,4,16]
           [--models mlp,gpt] [--rounds 3] [--reps 10]
           [--kinds ours,eager,compile]

Kinds `ours-fused` and `ours-unfused` are ours with fuse_elementwise set
(True / False) instead of the default, to measure element-wise fusion on
the CPU. Ratios are against the last kind.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(os.environ.get(
    "GA_BUILD_DIR", os.path.join(HERE, "..", "build")), "python_packages"))
from ga_mlir.steplib import time_calls  # noqa: E402


# ----------------------------------------------------------------- models
def _kit_models():
    """The GPU kit's models (scripts/gpu_kit/kit_models.py): the MLP and
    the optimizer are the same here."""
    sys.path.insert(0, os.path.join(HERE, "..", "scripts", "gpu_kit"))
    import kit_models
    return kit_models


def make(model_name, seed=0):
    if model_name == "mlp":
        return _kit_models().make("mlp", seed)
    import torch
    import torch.nn.functional as F
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    vocab, d, heads, context, b = 512, 128, 4, 64, 32
    ids = torch.randint(0, vocab, (b, context), generator=g)
    targets = torch.randint(0, vocab, (b, context), generator=g)

    def loss_fn(m, ids, targets):
        logits = m(ids)
        return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    model = _kit_models().GPT(vocab, d, heads, context, fused_attention=True)
    return model, loss_fn, (ids, targets)


def optimizer_for(model):
    return _kit_models().optimizer_for(model)


def pytorch_accumulation(model, loss_fn, opt, batch, n, compiled, first):
    """One step of PyTorch's own accumulation loop, the baseline of the
    benches: `batch` split into `n` micro-batches (tensor_split: a remainder
    is spread), each loss weighted by its share of the batch, backward per
    micro-batch, one optimizer step. The model is run through torch.compile
    when `compiled`. The step's summed loss of its first call goes into
    first["loss"]."""
    import torch
    fwd = torch.compile(model) if compiled else model
    b = batch[0].shape[0]
    chunks = list(zip(*(t.tensor_split(n) for t in batch)))

    def run():
        total = 0.0
        for chunk in chunks:
            loss = loss_fn(fwd, *chunk) * (chunk[0].shape[0] / b)
            loss.backward()
            total += loss.item()
        opt.step()
        opt.zero_grad()
        first.setdefault("loss", total)
    return run


# ----------------------------------------------------------------- workers
def worker(a):
    import torch
    torch.set_num_threads(1)
    model, loss_fn, batch = make(a.model)
    opt = optimizer_for(model)
    first = {}
    t0 = time.perf_counter()
    if a.worker.startswith("ours"):
        from ga_mlir.torch import compile_train_step
        fusion = {"ours-fused": {"fuse_elementwise": True},
                  "ours-unfused": {"fuse_elementwise": False}}
        step = compile_train_step(model, loss_fn, opt, example_inputs=batch,
                                  micro_batches=a.n, vector_width=512,
                                  **fusion.get(a.worker, {}))

        def run():
            first.setdefault("loss", step(*batch).item())
    else:
        run = pytorch_accumulation(model, loss_fn, opt, batch, a.n,
                                   a.worker != "eager", first)
    run()  # compiles (torch.compile) or loads the library (ours)
    setup = time.perf_counter() - t0
    times = time_calls(run, a.warmup, a.reps)
    return {"times": times, "loss": first["loss"], "setup": setup}


def run_worker(script=__file__, env=None, **kw):
    """Runs `script` (this one by default) as a worker with the flags `kw`
    on one thread, with `env` added to the environment; returns the JSON
    object of its last line."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", **(env or {}))
    cmd = [sys.executable, os.path.abspath(script)]
    for k, v in kw.items():
        cmd += ["--" + k.replace("_", "-"), str(v)]
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def add_timing_arguments(p, reps):
    """The options of how often each figure is measured (and --json)."""
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=reps)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--json", default=None)


def run_rounds(a, t0, configs, kinds, run):
    """`run(model, n, kind)` (a worker's result) for every (model, n) of
    `configs` and every kind, in a.rounds interleaved rounds: {(model, n,
    kind): {"times": all rounds' times, "loss": .., "setup": the first
    round's}}."""
    results = {}
    for r in range(a.rounds):
        for model, n in configs:
            for kind in kinds:
                res = run(model, n, kind)
                acc = results.setdefault((model, n, kind), {"times": []})
                acc["times"] += res["times"]
                acc.setdefault("loss", res["loss"])
                acc.setdefault("setup", res["setup"])
        print(f"round {r + 1}/{a.rounds} done after {time.time() - t0:.0f} s",
              flush=True)
    return results


def finish(a, t0, rows):
    """The closing line of a run (its time, what each figure is a median
    of, the load) and, with --json, the rows."""
    print(f"\ntotal {time.time() - t0:.0f} s; median of {a.rounds} x "
          f"{a.reps} runs per figure (interleaved rounds, {a.warmup} warm-up "
          "runs each); load average at end: %.2f %.2f %.2f"
          % os.getloadavg())
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


def main():
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="mlp,gpt")
    p.add_argument("--ns", default="1,4,16")
    add_timing_arguments(p, reps=10)
    p.add_argument("--kinds", default="ours,eager,compile")
    p.add_argument("--worker", choices=["ours", "ours-fused", "ours-unfused",
                                        "eager", "compile"])
    p.add_argument("--model", default="mlp")
    p.add_argument("--n", type=int, default=1)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a)))
        return

    t0 = time.time()
    print("load average at start: %.2f %.2f %.2f on %d CPUs; 1 thread"
          % (os.getloadavg() + (os.cpu_count(),)), flush=True)
    configs = [(m, int(n)) for m in a.models.split(",")
               for n in a.ns.split(",")]
    kinds = a.kinds.split(",")
    results = run_rounds(a, t0, configs, kinds, lambda model, n, kind:
                         run_worker(worker=kind, model=model, n=n,
                                    reps=a.reps, warmup=a.warmup))
    med = statistics.median
    print(f"\n{'model':>5} {'N':>3} " + " ".join(
        f"{k + ' ms':>14}" for k in kinds) + " " + " ".join(
        f"{k + '/' + kinds[-1]:>22}" for k in kinds[:-1]) + " " + " ".join(
        f"{'loss ' + k:>14}" for k in kinds))
    rows = []
    for model, n in configs:
        res = [results[(model, n, k)] for k in kinds]
        ts = [med(r["times"]) for r in res]
        row = dict(model=model, n=n)
        for k, t, r in zip(kinds, ts, res):
            row[k + "_ms"] = t * 1e3
            row["loss_" + k] = r["loss"]
        rows.append(row)
        print(f"{model:>5} {n:>3} " + " ".join(
            f"{t * 1e3:>14.2f}" for t in ts) + " " + " ".join(
            f"{t / ts[-1]:>22.3f}" for t in ts[:-1]) + " " + " ".join(
            f"{r['loss']:>14.5f}" for r in res))
    finish(a, t0, rows)


if __name__ == "__main__":
    main()
