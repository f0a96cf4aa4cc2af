# REQUIRES: ptxas
# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=1 %s | FileCheck %s
#
# max_memory= on a data-parallel step compiled for the GPU (gloo, one
# process; no GPU here, nothing runs): the budget constrains the figure
# memory_report() shows, the GPU step's device bytes with its NCCL buckets'
# buffers and the cuBLASLt workspace, not the single-process step's (which
# counts no collective's buffers and is below it). A budget one byte under
# the step's report at N = 1 chooses N > 1, its predicted peak equal to
# memory_report()'s total_peak and within the budget (the single-process
# estimate at N = 1 fits that budget: with it, the step chosen exceeded it);
# a budget under every N's report is refused (budget-not-met), naming the
# data-parallel step's smallest per-rank peak (not the single-process
# one).
#
# CHECK: N=1 report {{[0-9]+}} workspaces 33554432
# CHECK: single-process estimate at N=1 fits: True
# CHECK: budget report(N=1)-1: N>1 True predicted == report True within True
# CHECK: budget workspace: refused budget-not-met names True at True

import torch
import torch.distributed as dist
import torch.nn.functional as F

import zoo
from ga_mlir.torch import CompileError, compile_train_step
from ga_mlir.torch._dp_memory import budget_bytes

dist.init_process_group("gloo")


def loss_fn(m, x, y):
    return F.cross_entropy(m(x), y)


def compile_mlp(**kwargs):
    torch.manual_seed(0)
    model = zoo.MLP(classes=6)
    batch = (torch.randn(16, 12), torch.randint(0, 6, (16,)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return compile_train_step(model, loss_fn, opt, batch, target="cuda",
                              **kwargs)


one = compile_mlp(micro_batches=1).memory_report()
print(f"N=1 report {one['total_peak']} workspaces {one['workspaces']}",
      flush=True)
budget = one["total_peak"] - 1
step = compile_mlp(max_memory=budget)
chosen = step.chosen_configuration()
report = step.memory_report()["total_peak"]
# What the budget path measured before (the global step, one process):
# its N = 1 estimate, below the data-parallel step's report.
print(f"single-process estimate at N=1 fits: "
      f"{chosen['single_process_peak'] <= budget}", flush=True)
print(f"budget report(N=1)-1: N>1 {chosen['micro_batches'] > 1} "
      f"predicted == report {chosen['predicted_peak'] == report} "
      f"within {report <= budget}", flush=True)
# Under the workspace alone: nothing fits; the budget named is the data-
# parallel step's report at one sample per micro-batch (N = 16).
try:
    compile_mlp(max_memory=one["workspaces"])
    print("budget workspace: not refused")
except CompileError as error:
    named = int(str(error).split(" bytes")[0].split()[-1])
    print(f"budget workspace: refused {error.code} names "
          f"{named > one['workspaces']} at {'(N = 16' in str(error)}")
assert budget_bytes("33MiB") == 33 << 20 and budget_bytes(5) == 5
dist.destroy_process_group()
