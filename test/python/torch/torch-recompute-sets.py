# RUN: rm -rf %t.cache %t && mkdir -p %t
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %ga_obj_root/bin/ga-verify %t | FileCheck %s
#
# The recompute sets derived from the forward's dataflow (--ga-rematerialize
# recompute=attention and recompute=layers) on a two-layer GPT with
# dropout on the attention probabilities (T = 16 > 2 x the head size, so
# the scores outgrow the queries and keys they are computed from):
# * bitwise: the rewritten step with each set computes the results of the
#   one without it (ga-verify --rtol=0 --atol=0, the library's CPU options,
#   BLAS included), and the compiled step equals PyTorch's full-batch step
#   with dropout on (zoo.check);
# * under budgets from the peak of N = 1 without recomputation down to
#   the smallest reachable one, compile_train_step(max_memory=) chooses a
#   configuration whose predicted peak and measured peak (the heap counter,
#   libGAHeapCount.so preloaded by re-executing this script, plus arguments
#   and static storage) are within the budget, the prediction within 5 % of
#   the measurement, and the peak never rises as the budget falls;
# * step.memory_report() counts the recomputed buffers inside temporaries,
#   inside total_peak.

import os
import subprocess
import sys

from ga_mlir import steplib

lib = steplib.heap_count_library()
if lib and "GA_TEST_PRELOADED" not in os.environ:
    env = dict(os.environ, LD_PRELOAD=lib, GA_TEST_PRELOADED="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch
from torch import nn
from torch.nn import functional as F

import zoo
from ga_mlir import run_pipeline
from ga_mlir.torch import CompileError, compile_train_step, \
    export_train_step
from ga_mlir.torch._options import _lowering_options

ga_verify, work = sys.argv[1], sys.argv[2]
torch.set_num_threads(1)
counter = steplib.HeapCounter()
assert counter.active, "libGAHeapCount.so is not preloaded"
failures = 0
T, VOCAB = 16, 29


class Layer(nn.Module):
    """Pre-LayerNorm causal attention (dropout on the probabilities, as
    GPT-2 has it) and a GELU MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.drop = nn.Dropout(0.2)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        p = self.drop(F.softmax(scores.masked_fill(causal, float("-inf")),
                                dim=-1))
        return self.proj((p @ v).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class AttentionGPT(nn.Module):
    def __init__(self, d=16, heads=8, layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(T, d)
        self.layers = nn.Sequential(*[Layer(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        return self.head(self.ln(self.layers(x)))


def batch_of(gen):
    return zoo.lm_batch(gen, b=4, t=T, vocab=VOCAB)


# Bitwise: the step rewritten with N = 2, with and without each set (SGD
# with momentum), with the library's CPU options (BLAS too).
torch.manual_seed(1)
model = AttentionGPT()
batch = batch_of(torch.Generator().manual_seed(2))
ir, spec = export_train_step(model, zoo.lm_loss, zoo.OPTIMIZERS["sgd"](model),
                             batch)
first = spec.arg_count() - len(batch) - spec.num_random_args()
marks = ",".join(f"{first + i}:0" for i in range(len(batch)))
rewritten = run_pipeline(ir, f"builtin.module(ga-accumulate{{micro-batches=2 "
                         f"batch-args={marks}}})")
path = f"{work}/step.mlir"
with open(path, "w") as f:
    f.write(rewritten)
lower = " ".join(o for o in _lowering_options({"share_buffers": True})
                 if not o.startswith(("c-interface", "out-params")))
for policy in ("attention", "layers"):
    verify = subprocess.run(
        [ga_verify, path, "--pipeline=builtin.module(func.func("
         f"ga-rematerialize{{recompute={policy}}}))", "--rtol=0", "--atol=0",
         "--seeds=2", f"--lower-options={lower}"],
        capture_output=True, text=True)
    last = (verify.stdout.strip().splitlines() or [verify.stderr])[-1:]
    failures += verify.returncode != 0
    # CHECK: attention: ga-verify: PASS: {{[0-9]+}}/{{[0-9]+}} results match on all 2 input sets
    # CHECK: layers: ga-verify: PASS: {{[0-9]+}}/{{[0-9]+}} results match on all 2 input sets
    print(f"{policy}: ga-verify: " + " | ".join(last))

# Against PyTorch's full-batch step, dropout on.
# CHECK: attention-gpt-layers adamw N=2: {{.*}} OK
failures += zoo.check("attention-gpt-layers", AttentionGPT, batch_of,
                      zoo.lm_loss, optimizers=("adamw",), ns=(2,),
                      recompute="layers", share_buffers=True)
# CHECK: attention-gpt-attention adamw N=2: {{.*}} OK
failures += zoo.check("attention-gpt-attention", AttentionGPT, batch_of,
                      zoo.lm_loss, optimizers=("adamw",), ns=(2,),
                      recompute="attention", share_buffers=True)


def measure(step, model, optimizer, batch):
    """What one call of `step` holds: its arguments, the heap growth of the
    call and the library's static storage (as torch-memory-report.py)."""
    step(*batch)
    arguments = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for s in optimizer.state.values() for t in s.values()
        if torch.is_tensor(t)) + sum(t.nbytes for t in batch)
    counter.reset_peak()
    live = counter.live()
    step(*batch)
    heap = counter.peak() - live
    static = sum(steplib.static_storage_bytes(v.path)
                 for v in step._variants.values())
    return arguments + heap + static


def compiled(**options):
    torch.manual_seed(1)
    model = AttentionGPT()
    opt = zoo.OPTIMIZERS["adamw"](model)
    return model, opt, compile_train_step(model, zoo.lm_loss, opt, batch,
                                          **options)


# The budget sweep: from the peak of N = 1 without recomputation (no
# sharing either) down past the smallest one reachable.
top = compiled(micro_batches=1)[2].memory_report()["total_peak"]
previous, ok_all, seen = None, True, set()
for percent in (100, 75, 50, 30):
    budget = top * percent // 100
    try:
        model, opt, step = compiled(max_memory=budget)
    except CompileError as error:  # nothing fits
        fits_none = "the smallest budget that fits is" in str(error)
        ok_all &= fits_none
        print(f"budget {percent}%: nothing fits "
              f"{'OK' if fits_none else 'FAIL ' + str(error)}")
        continue
    c = step.chosen_configuration()
    measured = measure(step, model, opt, batch)
    predicted = c["predicted_peak"]
    error = (predicted - measured) / measured
    ok = predicted <= budget and measured <= budget and abs(error) <= 0.05 \
        and (previous is None or predicted <= previous)
    ok_all &= ok
    previous = predicted
    seen.add(c["recompute"])
    print(f"budget {percent}%: N = {c['micro_batches']}, recompute "
          f"{c['recompute']}, predicted {predicted}, measured {measured} "
          f"({100 * error:+.2f} %) {'OK' if ok else 'FAIL'}")
failures += not ok_all
# CHECK: budget 100%: N = 1, {{.*}} OK
# CHECK: sweep: {{.*}} OK
print(f"sweep: sets chosen {sorted(seen)} {'OK' if ok_all else 'FAIL'}")

# The report of a step with recomputation: recomputed within temporaries,
# within total_peak.
r = compiled(micro_batches=2, recompute="layers",
             share_buffers=True)[2].memory_report()
ok = 0 < r["recomputed"] <= r["temporaries"] and r["total_peak"] >= \
    r["static"] + r["arguments"]
failures += not ok
# CHECK: report layers N=2: recomputed {{[0-9]+}} of temporaries {{[0-9]+}}, total_peak {{[0-9]+}} OK
print(f"report layers N=2: recomputed {r['recomputed']} of temporaries "
      f"{r['temporaries']}, total_peak {r['total_peak']} "
      f"{'OK' if ok else 'FAIL'}")
sys.exit(failures)
