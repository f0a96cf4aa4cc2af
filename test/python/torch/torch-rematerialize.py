# RUN: rm -rf %t.cache %t && mkdir -p %t
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %ga_obj_root/bin/ga-verify %t | FileCheck %s
#
# compile_train_step(recompute="pointwise") (--ga-rematerialize inside the
# micro-batch loop): on a GPT-style step with dropout (random numbers from
# the counter-based generator), GELU and LayerNorm,
# * the rewritten step with the pass computes bitwise the results of the
#   one without it (ga-verify --rtol=0 --atol=0, the library's CPU options
#   but BLAS: vectorized, approximate math, static temporaries);
# * the total peak of step.memory_report() drops;
# * the compiled step still equals PyTorch's full-batch step (zoo.check),
#   with recompute="pointwise" and with recompute="products" and
#   share_buffers=True.

import subprocess
import sys

import torch
from torch import nn

import zoo
from ga_mlir import run_pipeline
from ga_mlir.torch import compile_train_step, export_train_step
from ga_mlir.torch._options import library_cpu_options


def pass_options(options):
    """The CPU library's lowering options as the text of --ga-lower-to-cpu's
    options (the same names, with dashes)."""
    return " ".join(
        f"{k.replace('_', '-')}={int(v) if isinstance(v, bool) else v}"
        for k, v in sorted(library_cpu_options(options).items()))


ga_verify, work = sys.argv[1], sys.argv[2]
failures = 0


class DropoutGPT(zoo.GPT):
    """zoo.GPT with dropout on the block's output."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.drop(self.tok(ids) + self.pos(torch.arange(t)))
        return self.head(self.ln(self.drop(self.block(x))))


def make(model_class, recompute, n):
    torch.manual_seed(1)
    model = model_class()
    opt = zoo.OPTIMIZERS["adamw"](model)
    batch = zoo.lm_batch(torch.Generator().manual_seed(2))
    return model, opt, batch, compile_train_step(
        model, zoo.lm_loss, opt, batch, micro_batches=n, recompute=recompute)


# Bitwise: the step rewritten with N = 3, with and without the pass (SGD
# with momentum: random moments would put AdamW's square roots outside
# their domain).
torch.manual_seed(1)
model = DropoutGPT()
batch = zoo.lm_batch(torch.Generator().manual_seed(2))
ir, spec = export_train_step(model, zoo.lm_loss,
                             zoo.OPTIMIZERS["sgd"](model), batch)
first = spec.arg_count() - len(batch) - spec.num_random_args()
marks = ",".join(f"{first + i}:0" for i in range(len(batch)))
rewritten = run_pipeline(ir, f"builtin.module(ga-accumulate{{micro-batches=3 "
                         f"batch-args={marks}}})")
path = f"{work}/step.mlir"
with open(path, "w") as f:
    f.write(rewritten)
# The library's CPU options but BLAS: with blas=1 the step with the pass
# differs in 3 of 31 results by 1 ulp (the embedding's gradient, its
# momentum, the loss): a contraction that the CBLAS matcher takes in one
# step runs as loops in the other, which sum in another order (issue #42
# keeps this open). The recomputation itself is exact: without BLAS every
# result is bitwise equal.
lower = " ".join(o for o in pass_options({}).split()
                 if not o.startswith(("c-interface", "out-params", "blas")))
verify = subprocess.run(
    [ga_verify, path, "--pipeline=builtin.module(func.func(ga-rematerialize"
     "{recompute=pointwise}))", "--rtol=0", "--atol=0", "--seeds=2",
     f"--lower-options={lower}"], capture_output=True, text=True)
last = (verify.stdout.strip().splitlines() or [verify.stderr])[-2:]
failures += verify.returncode != 0
# CHECK: ga-verify: PASS: {{[0-9]+}}/{{[0-9]+}} results match on all 2 input sets
print("ga-verify: " + " | ".join(last))

# The predicted peak drops, at N = 1 and N = 3.
for n in (1, 3):
    peaks = {r: make(DropoutGPT, r, n)[3].memory_report()["total_peak"]
             for r in ("none", "pointwise")}
    ok = peaks["pointwise"] < peaks["none"]
    failures += not ok
    # CHECK: N=1: total_peak none {{[0-9]+}}, pointwise {{[0-9]+}} OK
    # CHECK: N=3: total_peak none {{[0-9]+}}, pointwise {{[0-9]+}} OK
    print(f"N={n}: total_peak none {peaks['none']}, pointwise "
          f"{peaks['pointwise']} {'OK' if ok else 'FAIL'}")

# Against PyTorch's full-batch step.
# CHECK: gpt-recompute adamw N=3: {{.*}} OK
failures += zoo.check("gpt-recompute", zoo.GPT, zoo.lm_batch, zoo.lm_loss,
                      optimizers=("adamw",), ns=(3,), recompute="pointwise")
# recompute="products" (every forward value but the products computed again
# in the backward) with share_buffers (--ga-share-buffers), against PyTorch.
# CHECK: gpt-products adamw N=3: {{.*}} OK
failures += zoo.check("gpt-products", zoo.GPT, zoo.lm_batch, zoo.lm_loss,
                      optimizers=("adamw",), ns=(3,), recompute="products",
                      share_buffers=True)
sys.exit(failures)
